package columnfamily

import (
	"context"

	"github.com/snkv-go/snkv/internal/changelog"
	"github.com/snkv-go/snkv/internal/engine"
)

// The change feed's side of the write paths (docs/changes.md). Each write
// path calls feed after its write, inside its transaction; a column family
// without a feed pays one comparison there, and its transaction one read
// of a meta row (changelog.Feeds).

// feed records op on key in the column family's feed, if it has one,
// inside tx, unless the write before it failed (err, returned as is).
func (cf *ColumnFamily) feed(ctx context.Context, tx *engine.Tx, err error, op changelog.Op, key, value []byte, expMs int64) error {
	if err != nil || cf.m.Env.Feeds == nil {
		return err
	}
	return cf.m.Env.Feeds.Record(ctx, tx, cf.m.Name, op, key, value, expMs)
}

// fedAlone reports whether a call outside a transaction must run in one of
// its own to record its change: the column family has a feed. It reads the
// feeds' generation on the writer before the call's own statement, so a
// feed turned on by another process between the two is seen by the next
// call, not this one (docs/changes.md, "Not built yet").
func (cf *ColumnFamily) fedAlone() bool {
	fs := cf.m.Env.Feeds
	if fs == nil || cf.tx != nil {
		return false
	}
	c, err := cf.db().AcquireWriter(context.Background())
	if err != nil {
		return false // the call's own statement reports it
	}
	on, err := fs.OnAlone(context.Background(), c, cf.m.Name)
	cf.db().ReleaseWriter(c)
	return on || err != nil // an error: the transaction's path reports it
}

// putFed is Put in a transaction of its own that records the change.
func (cf *ColumnFamily) putFed(key, value []byte) error {
	err := cf.update("put", func(ctx context.Context, c *engine.Conn, tx *engine.Tx) error {
		_, err := cf.m.Upsert(ctx, c, cf.m.Writing(), key, value)
		return cf.feed(ctx, tx, err, changelog.OpPut, key, value, changelog.NoExpiry)
	})
	if err == nil {
		st := &cf.db().Stats
		st.Puts.Add(1)
		st.BytesWritten.Add(uint64(len(key) + len(value)))
	}
	return err
}

// deleteFed is Delete in a transaction of its own that records the change.
func (cf *ColumnFamily) deleteFed(key []byte) error {
	tx, err := cf.db().Begin(context.Background(), true)
	if err != nil {
		return cf.errf(context.Background(), "delete", err)
	}
	if err := bind(cf, tx).Delete(key); err != nil {
		_ = tx.Rollback()
		return err
	}
	return cf.errf(context.Background(), "delete", tx.Commit())
}

// feedExpiry records a live key's expiry changing from oldMs to newMs (-1:
// none): set_ttl with the new deadline, or clear_ttl; nothing when a key
// without a TTL is persisted.
func (cf *ColumnFamily) feedExpiry(ctx context.Context, tx *engine.Tx, key []byte, oldMs, newMs int64) error {
	switch {
	case newMs >= 0:
		return cf.feed(ctx, tx, nil, changelog.OpSetTTL, key, nil, newMs)
	case oldMs >= 0:
		return cf.feed(ctx, tx, nil, changelog.OpClearTTL, key, nil, changelog.NoExpiry)
	}
	return nil
}

package columnfamily

import (
	"bytes"
	"context"
	"database/sql/driver"
	"errors"

	"github.com/snkv-go/snkv/internal/changelog"
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/layout"
)

// The change feed's side of the write paths (docs/changes.md). Each write
// path calls feed after its write, inside its transaction; a column family
// without a feed pays one comparison there, and its transaction one read
// of a meta row (changelog.Feeds).

// aloneHook, when set (by tests), runs in a lone Put or Delete between
// its look at the feeds and its write.
var aloneHook func()

// alone prepares a call outside a transaction, holding the writer c, whose
// one statement q (a layout.Queries of the column family) writes: it
// returns the feeds' generation the statement checks (nil: none to check)
// and whether the call must run in a transaction of its own to record its
// change instead (the column family has a feed; c is then given back).
//
// The statement changes nothing when the generation it is given is not the
// file's: a feed was turned on or off since this store loaded them, by this
// process or another. The caller then runs the call in a transaction,
// which loads the feeds and records the change if the column family has a
// feed now; nothing happens between the check and the write. A
// version-1 layout may have no meta table to check (q.FeedsGen unset): the
// generation is read before the statement, and a feed turned on by
// another process between the two is missed (docs/changes.md).
func (cf *ColumnFamily) alone(c *engine.Conn, q *layout.Queries) (gen any, fed bool) {
	fs := cf.m.Env.Feeds
	if fs == nil {
		return nil, false
	}
	if q.FeedsGen {
		gen, fed = fs.Loaded(cf.m.Name)
	} else {
		var err error
		fed, err = fs.OnAlone(context.Background(), c, cf.m.Name)
		fed = fed || err != nil // an error: the transaction's path reports it
	}
	if fed {
		cf.db().ReleaseWriter(c)
	}
	return gen, fed
}

// loadFeeds has the write transaction tx of a call outside a transaction
// read the feeds, so that the call's next ones check the generation it
// found (alone) even when this one records nothing.
func (cf *ColumnFamily) loadFeeds(ctx context.Context, tx *engine.Tx) error {
	if fs := cf.m.Env.Feeds; fs != nil {
		_, err := fs.For(ctx, tx, cf.m.Name)
		return err
	}
	return nil
}

// putFed is Put in a transaction of its own that records the change.
func (cf *ColumnFamily) putFed(key, value []byte) error {
	err := cf.update("put", func(ctx context.Context, c *engine.Conn, tx *engine.Tx) error {
		if err := cf.loadFeeds(ctx, tx); err != nil {
			return err
		}
		cd := cf.m.Codec(cf.m.Writing())
		err := cd.Put(ctx, c, key, value)
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
// A key that is missing or expired gives ErrNotFound, and the transaction
// commits all the same: an expired key goes.
func (cf *ColumnFamily) deleteFed(key []byte) error {
	ctx := context.Background()
	tx, err := cf.db().Begin(ctx, true)
	if err != nil {
		return cf.errf(ctx, "delete", err)
	}
	err = cf.loadFeeds(ctx, tx)
	if err != nil {
		err = cf.errf(ctx, "delete", err)
	} else {
		err = bind(cf, tx).Delete(key)
	}
	if err != nil && err != engine.ErrNotFound {
		_ = tx.Rollback()
		return err
	}
	if cerr := tx.Commit(); cerr != nil {
		return cf.errf(ctx, "delete", cerr)
	}
	return err
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

// purgeFeed returns what a purge of the column family calls in each of its
// transactions: it records each key the transaction deletes (op expired,
// with its deadline) when the column family has a feed, and is nil without
// a store-wide feed state.
func (cf *ColumnFamily) purgeFeed() *expiry.Feed {
	if cf.m.Env.Feeds == nil {
		return nil
	}
	t := &cf.m.Writing().Objects
	return &expiry.Feed{
		Limit: func(tx *engine.Tx, nowMs int64, limit int) error { return cf.recordExpiredIn(tx, t, nowMs, limit) },
		Keys:  cf.recordPurged,
	}
}

// recordPurged records the keys a purge deleted in tx (op expired, with
// their deadlines) when the column family has a feed.
func (cf *ColumnFamily) recordPurged(tx *engine.Tx, gone []engine.Expired) error {
	conf, err := cf.m.Env.Feeds.For(tx.Ctx(), tx, cf.m.Name)
	if conf == nil || err != nil {
		return err
	}
	for _, g := range gone {
		exp, err := expiry.Decode(g.Exp)
		if err != nil {
			return err
		}
		// g.Key is the purge's to reuse: the record keeps a copy.
		if err := cf.feed(tx.Ctx(), tx, nil, changelog.OpExpired, bytes.Clone(g.Key), nil, exp); err != nil {
			return err
		}
	}
	return nil
}

// recordExpiredIn is recordExpired when the column family has a feed.
func (cf *ColumnFamily) recordExpiredIn(tx *engine.Tx, t *layout.Objects, nowMs int64, limit int) error {
	if cf.m.Env.Feeds == nil {
		return nil
	}
	conf, err := cf.m.Env.Feeds.For(tx.Ctx(), tx, cf.m.Name)
	if conf == nil || err != nil {
		return err
	}
	return cf.recordExpired(tx, t, nowMs, limit)
}

// recordExpired records the keys a purge as of nowMs, limited to limit
// (<= 0: all), is about to delete, in the order it deletes them: the
// entries of the expiry index before nowMs+1 whose key index row agrees
// (format 2), or the entries before it (version 1).
func (cf *ColumnFamily) recordExpired(tx *engine.Tx, t *layout.Objects, nowMs int64, limit int) error {
	ctx, c := tx.Ctx(), tx.Conn()
	if limit <= 0 {
		limit = -1
	}
	hi := expiry.PurgeBound(nowMs)
	var q string
	if t.V2 {
		q = `SELECT e.expire_ms, e.key FROM ` + t.Quoted.Expiry + ` AS e JOIN ` + t.Quoted.Keys +
			` AS k ON k.key = e.key AND k.expire_ms = e.expire_ms WHERE e.expire_ms < ?1 ORDER BY e.expire_ms, e.key LIMIT ?2`
	} else {
		q = `SELECT substr(key, 1, 8), substr(key, 9) FROM ` + t.Quoted.Expiry + ` WHERE key < ?1 ORDER BY key LIMIT ?2`
	}
	type gone struct {
		key []byte
		exp int64
	}
	var all []gone
	rows, err := c.Query(ctx, q, hi, int64(limit))
	if err != nil {
		return err
	}
	for rows.Next() {
		exp, derr := expiry.Decode(rows.Bytes(0))
		if derr != nil {
			err = derr
			break
		}
		all = append(all, gone{key: rows.Bytes(1), exp: exp})
	}
	if rerr := rows.Err(); err == nil {
		err = rerr
	}
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	for _, g := range all {
		if err := cf.feed(ctx, tx, nil, changelog.OpExpired, g.key, nil, g.exp); err != nil {
			return err
		}
	}
	return nil
}

// feedLazy records, before a lazy delete inside the write transaction the
// handle is bound to, the keys that delete removes (op expired, with the
// deadline the key index holds): those whose deadline is at or before
// nowMs. A column family without a feed reads nothing.
func (cf *ColumnFamily) feedLazy(keys [][]byte, nowMs int64) error {
	fs, tx := cf.m.Env.Feeds, cf.tx
	if fs == nil {
		return nil
	}
	ctx := tx.Ctx()
	if conf, err := fs.For(ctx, tx, cf.m.Name); conf == nil || err != nil {
		return err
	}
	q := `SELECT expire_ms FROM ` + cf.m.Writing().Objects.Quoted.Keys + ` WHERE key = ?1`
	dest := make([]driver.Value, 1)
	for _, k := range keys {
		err := tx.Conn().QueryRow(ctx, q, dest, k)
		if err == engine.ErrNotFound {
			continue
		}
		if err != nil {
			return err
		}
		b, _ := dest[0].([]byte)
		exp, err := expiry.Decode(b)
		if err != nil {
			return err
		}
		if expiry.Expired(exp, nowMs) {
			if err := cf.feed(ctx, tx, nil, changelog.OpExpired, k, nil, exp); err != nil {
				return err
			}
		}
	}
	return nil
}

// errLeftForPurge stops a lazy delete outside a write transaction in a
// column family with a feed: the purge deletes and records those keys.
var errLeftForPurge = errors.New("expired keys of a column family with a feed are left for the purge")

package columnfamily

import (
	"context"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/family"
	"github.com/snkv-go/snkv/internal/rowcodec"
)

// The rest of the read path of a column family: the lazy expiry of
// keys a read found expired, Count and GetMany. Point reads are in cf.go.

// expired deletes keys that a read found expired (as of nowMs), without ever
// committing or aborting a caller's transaction: in a write transaction the
// delete joins it; in a read-only one it waits for the end; outside any, it
// runs now if the writer is idle, or is left for PurgeExpired.
func (cf *ColumnFamily) expired(keys [][]byte, nowMs int64) {
	cf.db().Stats.ExpiredOnRead.Add(uint64(len(keys)))
	switch {
	case cf.tx != nil && cf.tx.Writable():
		if cf.feedLazy(keys, nowMs) != nil {
			return // left for purge
		}
		for _, k := range keys {
			if _, err := cf.tx.Conn().Exec(cf.tx.Ctx(), cf.m.Writing().SQL.LazyDel, k, expiry.Encode(nowMs)); err != nil {
				return // left for purge
			}
		}
	case cf.tx != nil:
		m := cf.m
		cf.tx.OnEnd(func() { deleteExpired(m, keys, nowMs) })
	default:
		deleteExpired(cf.m, keys, nowMs)
	}
}

// deleteExpired removes keys that are still expired as of nowMs, in one
// small transaction, if that needs no waiting (the writer is free now);
// otherwise they are left for PurgeExpired.
func deleteExpired(m *family.Family, keys [][]byte, nowMs int64) {
	enc := expiry.Encode(nowMs)
	m.Env.DB.TryUpdate(func(c *engine.Conn) error {
		if on, err := m.Env.Feeds.OnAlone(context.Background(), c, m.Name); on || err != nil {
			return errLeftForPurge
		}
		for _, k := range keys {
			if _, err := c.Exec(context.Background(), m.Writing().SQL.LazyDel, k, enc); err != nil {
				return err
			}
		}
		return nil
	})
}

// Count returns the number of live keys (expired keys that are not yet
// purged are not counted). It reads every key: O(n).
func (cf *ColumnFamily) Count() (int64, error) {
	c, ctx, err := cf.readConn()
	if err != nil {
		return 0, err
	}
	n, err := c.QueryInt(ctx, cf.m.Reading().SQL.Count, expiry.Encode(cf.nowMs()))
	cf.doneRead(c)
	return n, cf.errf(ctx, "count", err)
}

// GetMany returns the values of keys, in order, read from one consistent
// snapshot. A missing or expired key gives a nil entry.
func (cf *ColumnFamily) GetMany(keys [][]byte) ([][]byte, error) {
	if err := cf.alive(); err != nil {
		return nil, err
	}
	for _, k := range keys {
		if err := rowcodec.CheckKey(k); err != nil {
			return nil, err
		}
	}
	h := cf
	if cf.tx == nil {
		tx, err := cf.db().Begin(context.Background(), false)
		if err != nil {
			return nil, cf.errf(context.Background(), "get many", err)
		}
		defer tx.Commit()
		h = bind(cf, tx)
	}
	out := make([][]byte, len(keys))
	for i, k := range keys {
		v, err := h.Get(k)
		switch {
		case err == nil:
			out[i] = v
		case err != engine.ErrNotFound: // a missing key only, never a missing column family
			return nil, err
		}
	}
	return out, nil
}

package columnfamily

import (
	"context"
	"errors"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/family"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/internal/rowcodec"
)

// The read path of a column family: point reads (below SQL when the
// engine can, engine.QueryPoint), their lazy expiry, and Count.

// readConn returns the connection a read runs on: the transaction's, or an
// idle reader (give it back with doneRead).
func (cf *ColumnFamily) readConn() (*engine.Conn, context.Context, error) {
	if err := cf.alive(); err != nil {
		return nil, nil, err
	}
	if cf.tx != nil {
		if err := cf.tx.Check(false); err != nil {
			return nil, nil, err
		}
		return cf.tx.Conn(), cf.tx.Ctx(), nil
	}
	// A held read transaction is reused when nothing has committed since.
	c, err := cf.db().AcquireSnapshot(context.Background(), engine.ReadPoint)
	return c, context.Background(), err
}

func (cf *ColumnFamily) doneRead(c *engine.Conn) {
	if cf.tx == nil {
		cf.db().ReleaseSnapshot(c)
	}
}

// lookup reads key's value (when withValue) and expiry. expMs is -1 for a
// key without TTL. An expired key is reported as ErrNotFound and expired
// lazily.
func (cf *ColumnFamily) lookup(key []byte, withValue bool) (value []byte, expMs int64, err error) {
	if err := cf.alive(); err != nil {
		return nil, 0, err
	}
	if err := family.CheckKey(key); err != nil {
		return nil, 0, err
	}
	c, ctx, err := cf.readConn()
	if err != nil {
		return nil, 0, err
	}
	value, expMs, found, err := cf.readRow(ctx, c, key, withValue)
	cf.doneRead(c)
	st := &cf.db().Stats
	st.Gets.Add(1)
	switch {
	case err != nil:
		return nil, 0, cf.errf(ctx, "get", err)
	case !found:
		st.Misses.Add(1)
		return nil, 0, engine.ErrNotFound
	}
	if now := cf.nowMs(); expMs >= 0 && expiry.Expired(expMs, now) {
		st.Misses.Add(1)
		cf.expired([][]byte{key}, now)
		return nil, 0, engine.ErrNotFound
	}
	st.Hits.Add(1)
	if withValue {
		value = family.NonNil(value)
		st.BytesRead.Add(uint64(len(value)))
	}
	return value, expMs, nil
}

// readRow reads key's row on c: its value (when withValue) and its expiry
// (-1 for none), straight off the statement or, when the engine can, off
// the B-trees below SQL (engine.QueryPoint), so that the value is copied
// once and the expiry decoded in place. found is false for a missing key.
func (cf *ColumnFamily) readRow(ctx context.Context, c *engine.Conn, key []byte, withValue bool) (value []byte, expMs int64, found bool, err error) {
	sh := cf.m.Reading()
	q, spec, expCol, ecrcCol := sh.SQL.Exists, &sh.ExistsPoint, layout.ExistsExpiry, layout.ExistsEcrc
	if withValue {
		q, spec, expCol, ecrcCol = sh.SQL.Get, &sh.GetPoint, layout.GetExpiry, layout.GetEcrc
	}
	if !sh.Objects.Crc {
		ecrcCol = -1
	}
	rows, err := c.QueryPoint(ctx, q, spec, key)
	if err != nil {
		return nil, 0, false, err
	}
	if rows.SchemaChanged() {
		// Compiled anew: the table may be another column family's now.
		if err := cf.current(ctx, c); err != nil {
			return nil, 0, false, errors.Join(err, rows.Close())
		}
	}
	expMs = -1
	st := &cf.db().Stats
	if found = rows.Next(); found {
		if expMs, err = rowcodec.ReadExpiry(rows, st, key, expCol, ecrcCol, sh.Objects.V2); err == nil && withValue {
			value, err = readValue(ctx, c, cf.m, rows, st, key, sh, expMs >= 0)
		}
	}
	return value, expMs, found, errors.Join(err, rows.Close())
}

// readValue returns a copy of the value of the current row of a get (in
// the clear) read on c, checked to be a BLOB and, in a table with a
// checksum column, to match its checksum, which also says whether the key
// has a TTL (hasTTL: the read found a key index row) and how the value is
// stored.
func readValue(ctx context.Context, c *engine.Conn, m *family.Family, rows *engine.Rows, st *engine.Counters, key []byte, sh *family.Shape, hasTTL bool) ([]byte, error) {
	raw, err := rowcodec.RawValue(rows, key, layout.GetValue)
	if err != nil {
		return nil, err
	}
	if sum := rowcodec.DataSum(key, raw, hasTTL); sh.Objects.Crc && (sum == 0 || m.Sealing() != nil || rows.Int(layout.GetCrc) != sum) {
		// Not the common case of a verified row in the clear, which takes
		// one call into SQLite.
		crc, k := rows.IntKind(layout.GetCrc)
		v, opened, err := m.DecodeOn(ctx, c, nil, st, key, raw, sum, crc, k, sh.Objects.V2, nil, nil)
		if err != nil || opened {
			return v, err
		}
	}
	return append(make([]byte, 0, len(raw)), raw...), nil
}

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

// Get returns the value of key, or ErrNotFound if it is missing or expired.
// The returned slice belongs to the caller; an empty value is an empty,
// non-nil slice.
func (cf *ColumnFamily) Get(key []byte) ([]byte, error) {
	v, _, err := cf.lookup(key, true)
	return v, err
}

// Exists reports whether key is present and not expired.
func (cf *ColumnFamily) Exists(key []byte) (bool, error) {
	_, _, err := cf.lookup(key, false)
	if err == engine.ErrNotFound { // the bare sentinel: a missing key, not a missing column family
		return false, nil
	}
	return err == nil, err
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
		if err := family.CheckKey(k); err != nil {
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

package columnfamily

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
)

// ColumnFamily is a handle to one column family. A handle from the store
// runs every call in its own transaction and is safe for concurrent use; a
// handle bound to a transaction (kvstore.Tx.CF) runs inside that
// transaction and shares its single-goroutine rule.
type ColumnFamily struct {
	m   *meta
	tx  *engine.Tx // nil: each call is its own transaction
	bad error      // set by Bind for a handle that may not be used
}

// meta is the state all handles of one column family share.
type meta struct {
	reg   *Registry
	env   *Env
	name  string
	stamp int64 // the catalog's created_ms of the column family this state is for
	// nameArg and stampArg are name and stamp boxed once, so that binding
	// them to every single put costs no allocation.
	nameArg, stampArg any
	// The layout of the column family's objects and its SQL. Writers use
	// ws and readers rs: Upgrade switches ws inside the transaction that
	// changes the layout (the writer is exclusive, so no other write sees
	// the switch early) and rs once that transaction has committed.
	ws, rs  atomic.Pointer[shape]
	ttl     atomic.Bool // the TTL tables exist (as far as this process knows)
	dropped atomic.Bool
	// sealed: the values are sealed when the store is encrypted (every
	// column family; a hidden table when marked so, see seal.go).
	sealed atomic.Bool
}

func newMeta(r *Registry, name string, stamp int64, crc, v2 bool) *meta {
	m := &meta{reg: r, env: r.env, name: name, stamp: stamp, nameArg: name, stampArg: stamp}
	m.setShape(newShape(name, crc, v2))
	m.sealed.Store(!isHidden(name))
	return m
}

func (m *meta) setShape(sh *shape) { m.ws.Store(sh); m.rs.Store(sh) }

// w is the shape writes use.
func (m *meta) w() *shape { return m.ws.Load() }

// r is the shape reads use.
func (m *meta) r() *shape { return m.rs.Load() }

// Bind returns a handle to the same column family that runs inside tx; a
// handle of another store gives one whose every call fails with
// ErrForeignHandle. It is the plumbing behind kvstore.Tx.CF: use that.
func Bind(cf *ColumnFamily, tx *engine.Tx) *ColumnFamily {
	if cf == nil || cf.m == nil {
		return &ColumnFamily{tx: tx, bad: errNilHandle}
	}
	b := &ColumnFamily{m: cf.m, tx: tx}
	if cf.m.env.DB != tx.DB() {
		b.bad = fmt.Errorf("%w: %q", engine.ErrForeignHandle, cf.m.name)
	}
	return b
}

// Registry returns the registry the handle belongs to.
func (cf *ColumnFamily) Registry() *Registry {
	if cf == nil || cf.m == nil {
		return nil
	}
	return cf.m.reg
}

// Name returns the column family's name as stored.
func (cf *ColumnFamily) Name() string {
	if cf == nil || cf.m == nil {
		return ""
	}
	return cf.m.name
}

// HasTTL reports whether the column family has ever held a key with a TTL
// (its hidden TTL tables exist).
func (cf *ColumnFamily) HasTTL() bool { return cf.alive() == nil && cf.m.ttl.Load() }

// String returns "columnfamily(<name>)", for logs.
func (cf *ColumnFamily) String() string { return "columnfamily(" + cf.Name() + ")" }

func (cf *ColumnFamily) db() *engine.DB { return cf.m.env.DB }

func (cf *ColumnFamily) nowMs() int64 { return expiry.NowMs(cf.m.env.Clock) }

// errf wraps err with the column family and operation. The bare
// ErrNotFound of a missing key is returned as is: it is the common case and
// needs no context.
func (cf *ColumnFamily) errf(ctx context.Context, op string, err error) error {
	if err == nil || err == engine.ErrNotFound {
		return err
	}
	if gone := cf.dropped(err); gone != nil {
		return gone
	}
	return engine.Wrap(ctx, cf.m.name+": "+op, err)
}

var errDropped = errors.New("column family was dropped")

// errNilHandle is the error of a call on a nil (or zero) handle.
var errNilHandle = fmt.Errorf("%w: nil column family handle", engine.ErrInvalidArgument)

// CheckContext rejects a nil context: every snkv call that takes one
// reports ErrInvalidArgument for nil rather than guessing a default.
func CheckContext(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", engine.ErrInvalidArgument)
	}
	return nil
}

func (cf *ColumnFamily) alive() error {
	if cf == nil || cf.m == nil {
		return errNilHandle
	}
	if cf.bad != nil {
		return cf.bad
	}
	if cf.m.dropped.Load() {
		return fmt.Errorf("%w: %q: %w", engine.ErrNotFound, cf.m.name, errDropped)
	}
	return nil
}

// gone marks the handle's column family as dropped (its catalog row is
// gone, or belongs to a column family created since under the same name)
// and returns the error every later call gets.
func (cf *ColumnFamily) gone() error {
	cf.m.dropped.Store(true)
	return cf.alive()
}

// current checks, on c (inside the caller's transaction), that the
// column family is still the one the handle was opened on: a handle never
// writes into a column family of the same name created after its own was
// dropped, by this process or another.
func (cf *ColumnFamily) current(ctx context.Context, c *engine.Conn) error {
	n, err := c.QueryInt(ctx, cf.m.w().q.current, cf.m.nameArg, cf.m.stampArg)
	switch {
	case err != nil:
		return err
	case n == 0:
		return cf.gone()
	}
	return nil
}

// verify is current, run once per write transaction: the transaction
// holds the file's write lock, so only the transaction itself can drop the
// column family after the check, and a drop forgets every check made
// (engine.Tx.ForgetVerified).
func (cf *ColumnFamily) verify(ctx context.Context, tx *engine.Tx) error {
	if tx.Verified(cf.m) {
		return nil
	}
	if err := cf.current(ctx, tx.Conn()); err != nil {
		return err
	}
	tx.MarkVerified(cf.m)
	return nil
}

// upsert writes key's row, with no TTL, inside a write transaction that
// has verified the column family: below the SQL layer when the engine can
// (it writes the same bytes), else with the upsert statement. It reports
// the rows changed, which is always 1.
func (cf *ColumnFamily) upsert(ctx context.Context, c *engine.Conn, sh *shape, key, value []byte) (int64, error) {
	stored, sum := cf.m.encode(c, sh, key, value, false)
	return writeRow(ctx, c, sh, key, stored, sum)
}

// writeRow writes a data row, with no TTL, of stored value (encode's) and
// checksum sum (nil for a table without the column).
func writeRow(ctx context.Context, c *engine.Conn, sh *shape, key, stored []byte, sum any) (int64, error) {
	crc, _ := sum.(int64)
	if ok, err := c.Upsert(&sh.fast, key, stored, crc); ok || err != nil {
		return 1, err
	}
	return c.Exec(ctx, sh.q.upsert, key, stored, nil, nil, sum)
}

// deleteInTx deletes key below the SQL layer when the handle is bound to a
// write transaction and the engine can (a column family without TTL
// tables, whose keys never expire): fast reports whether it did.
func (cf *ColumnFamily) deleteInTx(ctx context.Context, c *engine.Conn, key []byte) (n int64, fast bool, err error) {
	if cf.tx == nil || !engine.FastPath {
		return 0, false, nil
	}
	if err := cf.verify(ctx, cf.tx); err != nil {
		return 0, true, err
	}
	sh := cf.m.w()
	// A key with a TTL may have expired: that delete reports ErrNotFound,
	// which the SQL statements decide.
	ok, found, err := c.Delete(&sh.fast, key, false)
	if found {
		n = 1
	}
	return n, ok || err != nil, err
}

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
	c, err := cf.db().AcquireRead(context.Background(), engine.ReadPoint)
	return c, context.Background(), err
}

func (cf *ColumnFamily) doneRead(c *engine.Conn) {
	if cf.tx == nil {
		cf.db().ReleaseRead(c)
	}
}

// writeConn returns the connection a single-statement write runs on: the
// transaction's, or the writer (give it back with doneWrite).
func (cf *ColumnFamily) writeConn() (*engine.Conn, context.Context, error) {
	if err := cf.alive(); err != nil {
		return nil, nil, err
	}
	if cf.tx != nil {
		if err := cf.tx.Check(true); err != nil {
			return nil, nil, err
		}
		return cf.tx.Conn(), cf.tx.Ctx(), nil
	}
	c, err := cf.db().AcquireWriter(context.Background())
	return c, context.Background(), err
}

func (cf *ColumnFamily) doneWrite(c *engine.Conn, err error) {
	if cf.tx == nil {
		cf.db().ReleaseWriter(c)
		if err == nil {
			cf.db().Stats.Commits.Add(1)
		}
	}
}

// update runs fn in a write transaction: the bound one, or a new one that
// commits when fn succeeds.
func (e *Env) update(ctx context.Context, bound *engine.Tx, op string, fn func(ctx context.Context, tx *engine.Tx) error) error {
	if bound != nil {
		if err := bound.Check(true); err != nil {
			return err
		}
		return engine.Wrap(bound.Ctx(), op, fn(bound.Ctx(), bound))
	}
	tx, err := e.DB.Begin(ctx, true)
	if err != nil {
		return engine.Wrap(ctx, op, err)
	}
	if err := fn(tx.Ctx(), tx); err != nil {
		_ = tx.Rollback()
		return engine.Wrap(ctx, op, err)
	}
	return tx.Commit()
}

func (cf *ColumnFamily) update(op string, fn func(ctx context.Context, c *engine.Conn, tx *engine.Tx) error) error {
	if err := cf.alive(); err != nil {
		return err
	}
	return cf.m.env.update(context.Background(), cf.tx, cf.m.name+": "+op, func(ctx context.Context, tx *engine.Tx) error {
		if err := cf.verify(ctx, tx); err != nil {
			return err
		}
		return fn(ctx, tx.Conn(), tx)
	})
}

// lookup reads key's value (when withValue) and expiry. expMs is -1 for a
// key without TTL. An expired key is reported as ErrNotFound and expired
// lazily.
func (cf *ColumnFamily) lookup(key []byte, withValue bool) (value []byte, expMs int64, err error) {
	if err := cf.alive(); err != nil {
		return nil, 0, err
	}
	if err := checkKey(key); err != nil {
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
		value = nonNil(value)
		st.BytesRead.Add(uint64(len(value)))
	}
	return value, expMs, nil
}

// readRow reads key's row on c: its value (when withValue) and its expiry
// (-1 for none), straight off the statement, so that the value is copied
// once and the expiry decoded in place. found is false for a missing key.
func (cf *ColumnFamily) readRow(ctx context.Context, c *engine.Conn, key []byte, withValue bool) (value []byte, expMs int64, found bool, err error) {
	sh := cf.m.r()
	q, expCol, ecrcCol := sh.q.exists, exExp, exEcrc
	if withValue {
		q, expCol, ecrcCol = sh.q.get, getExp, getEcrc
	}
	if !sh.t.Crc {
		ecrcCol = -1
	}
	rows, err := c.Query(ctx, q, key)
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
		if expMs, err = readExpiry(rows, st, key, expCol, ecrcCol, sh.t.V2); err == nil && withValue {
			value, err = cf.m.readValue(ctx, c, rows, st, key, sh, expMs >= 0)
		}
	}
	return value, expMs, found, errors.Join(err, rows.Close())
}

// expired deletes keys that a read found expired (as of nowMs), without ever
// committing or aborting a caller's transaction: in a write transaction the
// delete joins it; in a read-only one it waits for the end; outside any, it
// runs now if the writer is idle, or is left for PurgeExpired.
func (cf *ColumnFamily) expired(keys [][]byte, nowMs int64) {
	cf.db().Stats.ExpiredOnRead.Add(uint64(len(keys)))
	switch {
	case cf.tx != nil && cf.tx.Writable():
		for _, k := range keys {
			if _, err := cf.tx.Conn().Exec(cf.tx.Ctx(), cf.m.w().q.lazyDel, k, expiry.Encode(nowMs)); err != nil {
				return // left for purge
			}
		}
	case cf.tx != nil:
		m := cf.m
		cf.tx.OnEnd(func() { m.deleteExpired(keys, nowMs) })
	default:
		cf.m.deleteExpired(keys, nowMs)
	}
}

// deleteExpired removes keys that are still expired as of nowMs, in one
// small transaction, if that needs no waiting (the writer is free now);
// otherwise they are left for PurgeExpired.
func (m *meta) deleteExpired(keys [][]byte, nowMs int64) {
	enc := expiry.Encode(nowMs)
	m.env.DB.TryUpdate(func(c *engine.Conn) error {
		for _, k := range keys {
			if _, err := c.Exec(context.Background(), m.w().q.lazyDel, k, enc); err != nil {
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

// Put stores value under key, replacing any previous value and removing any
// TTL the key had (the key becomes permanent). A nil value is stored as an
// empty one.
func (cf *ColumnFamily) Put(key, value []byte) error {
	if err := cf.alive(); err != nil {
		return err
	}
	if err := cf.m.env.checkKV(key, value); err != nil {
		return err
	}
	c, ctx, err := cf.writeConn()
	if err != nil {
		return cf.errf(ctx, "put", err)
	}
	sh := cf.m.w()
	var n int64
	if cf.tx != nil {
		// In a transaction the column family is checked once, and each
		// put is a plain upsert.
		if err = cf.verify(ctx, cf.tx); err == nil {
			n, err = cf.upsert(ctx, c, sh, key, value)
		}
	} else {
		stored, sum := cf.m.encode(c, sh, key, value, false)
		n, err = c.Exec(ctx, sh.q.put, key, stored, cf.m.nameArg, cf.m.stampArg, sum)
	}
	if err == nil && n == 0 {
		err = cf.gone()
	}
	cf.doneWrite(c, err)
	if err != nil {
		return cf.errf(ctx, "put", err)
	}
	st := &cf.db().Stats
	st.Puts.Add(1)
	st.BytesWritten.Add(uint64(len(key) + len(value)))
	return nil
}

// PutIfAbsent stores value under key only if the key is missing or expired,
// and reports whether it wrote.
func (cf *ColumnFamily) PutIfAbsent(key, value []byte) (bool, error) {
	if err := cf.alive(); err != nil {
		return false, err
	}
	if err := cf.m.env.checkKV(key, value); err != nil {
		return false, err
	}
	return cf.putIfAbsent(key, value, -1)
}

// PutIfAbsentTTL is PutIfAbsent that gives the new key a TTL. An existing,
// live key keeps its value and its TTL.
func (cf *ColumnFamily) PutIfAbsentTTL(key, value []byte, d time.Duration) (bool, error) {
	if err := cf.alive(); err != nil {
		return false, err
	}
	if err := cf.m.env.checkKV(key, value); err != nil {
		return false, err
	}
	exp, err := expiry.ExpiryFromTTL(cf.nowMs(), d)
	if err != nil {
		return false, err
	}
	return cf.putIfAbsent(key, value, exp)
}

// putIfAbsent is PutIfAbsent(TTL) once key and value are checked; expMs
// is -1 for no TTL.
func (cf *ColumnFamily) putIfAbsent(key, value []byte, expMs int64) (bool, error) {
	var wrote bool
	err := cf.update("put if absent", func(ctx context.Context, c *engine.Conn, tx *engine.Tx) error {
		// An expired key counts as absent: remove it first.
		sh := cf.m.w()
		if _, err := c.Exec(ctx, sh.q.lazyDel, key, expiry.Encode(cf.nowMs())); err != nil {
			return err
		}
		stored, sum := cf.m.encode(c, sh, key, value, expMs >= 0)
		n, err := c.Exec(ctx, sh.q.insert, key, stored, cf.m.nameArg, cf.m.stampArg, sum)
		if err != nil || n == 0 {
			return err
		}
		wrote = true
		if expMs >= 0 {
			return cf.setExpiry(ctx, c, tx, key, -1, expMs)
		}
		return nil
	})
	if err == nil && wrote {
		st := &cf.db().Stats
		st.Puts.Add(1)
		st.BytesWritten.Add(uint64(len(key) + len(value)))
	}
	return wrote, err
}

// Delete removes key. It returns ErrNotFound if the key is missing or
// expired (an expired key is removed all the same).
func (cf *ColumnFamily) Delete(key []byte) error {
	if err := cf.alive(); err != nil {
		return err
	}
	if err := checkKey(key); err != nil {
		return err
	}
	c, ctx, err := cf.writeConn()
	if err != nil {
		return cf.errf(ctx, "delete", err)
	}
	n, fast, err := cf.deleteInTx(ctx, c, key)
	if !fast && err == nil {
		now := expiry.Encode(cf.nowMs())
		q := &cf.m.w().q
		n, err = c.Exec(ctx, q.delLive, key, now, cf.m.nameArg, cf.m.stampArg)
		if err == nil && n == 0 {
			err = cf.current(ctx, c)
		}
		if err == nil && n == 0 {
			// Missing, or expired: an expired key goes all the same.
			_, err = c.Exec(ctx, q.lazyDel, key, now)
		}
	}
	cf.doneWrite(c, err)
	if err != nil {
		return cf.errf(ctx, "delete", err)
	}
	if n == 0 {
		return engine.ErrNotFound
	}
	cf.db().Stats.Deletes.Add(1)
	return nil
}

// Count returns the number of live keys (expired keys that are not yet
// purged are not counted). It reads every key: O(n).
func (cf *ColumnFamily) Count() (int64, error) {
	c, ctx, err := cf.readConn()
	if err != nil {
		return 0, err
	}
	n, err := c.QueryInt(ctx, cf.m.r().q.count, expiry.Encode(cf.nowMs()))
	cf.doneRead(c)
	return n, cf.errf(ctx, "count", err)
}

// Clear removes every key of the column family, and its TTL state, in one
// transaction.
func (cf *ColumnFamily) Clear() error {
	return cf.update("clear", func(ctx context.Context, c *engine.Conn, tx *engine.Tx) error {
		t := cf.m.w().t
		on, err := t.Enabled(ctx, c)
		if err != nil {
			return err
		}
		if on {
			for _, q := range []string{`DELETE FROM ` + t.Expiry, `DELETE FROM ` + t.Keys} {
				if _, err := c.Exec(ctx, q); err != nil {
					return err
				}
			}
		}
		_, err = c.Exec(ctx, `DELETE FROM `+t.Data)
		return err
	})
}

// GetMany returns the values of keys, in order, read from one consistent
// snapshot. A missing or expired key gives a nil entry.
func (cf *ColumnFamily) GetMany(keys [][]byte) ([][]byte, error) {
	if err := cf.alive(); err != nil {
		return nil, err
	}
	for _, k := range keys {
		if err := checkKey(k); err != nil {
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
		h = Bind(cf, tx)
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

package columnfamily

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/snkv-go/snkv/internal/changelog"
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/family"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/internal/rowcodec"
)

// ColumnFamily is a handle to one column family. A handle from the store
// runs every call in its own transaction and is safe for concurrent use; a
// handle bound to a transaction (kvstore.Tx.CF) runs inside that
// transaction and shares its single-goroutine rule.
type ColumnFamily struct {
	m   *family.Family
	tx  *engine.Tx // nil: each call is its own transaction
	bad error      // set by bind for a handle that may not be used
}

func init() {
	family.NewHandle = func(f *family.Family) any {
		if f == nil {
			return (*ColumnFamily)(nil)
		}
		return &ColumnFamily{m: f}
	}
	family.BindHandle = func(h any, tx *engine.Tx) any {
		cf, _ := h.(*ColumnFamily)
		return bind(cf, tx)
	}
}

// bind returns a handle to the same column family that runs inside tx; a
// handle of another store gives one whose every call fails with
// ErrForeignHandle, a nil one one whose every call fails with
// ErrInvalidArgument. It is the plumbing behind kvstore.Tx.CF.
func bind(cf *ColumnFamily, tx *engine.Tx) *ColumnFamily {
	if cf == nil || cf.m == nil {
		return &ColumnFamily{tx: tx, bad: errNilHandle}
	}
	b := &ColumnFamily{m: cf.m, tx: tx}
	if cf.m.Env.DB != tx.DB() {
		b.bad = fmt.Errorf("%w: %q", engine.ErrForeignHandle, cf.m.Name)
	}
	return b
}

// Name returns the column family's name as stored.
func (cf *ColumnFamily) Name() string {
	if cf == nil || cf.m == nil {
		return ""
	}
	return cf.m.Name
}

// HasTTL reports whether the column family has ever held a key with a TTL
// (its hidden TTL tables exist).
func (cf *ColumnFamily) HasTTL() bool { return cf.alive() == nil && cf.m.TTL.Load() }

// String returns "columnfamily(<name>)", for logs.
func (cf *ColumnFamily) String() string { return "columnfamily(" + cf.Name() + ")" }

func (cf *ColumnFamily) db() *engine.DB { return cf.m.Env.DB }

func (cf *ColumnFamily) nowMs() int64 { return expiry.NowMs(cf.m.Env.Clock) }

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
	return engine.Wrap(ctx, cf.m.Name+": "+op, err)
}

var errDropped = errors.New("column family was dropped")

// errNilHandle is the error of a call on a nil (or zero) handle.
var errNilHandle = fmt.Errorf("%w: nil column family handle", engine.ErrInvalidArgument)

func (cf *ColumnFamily) alive() error {
	if cf == nil || cf.m == nil {
		return errNilHandle
	}
	if cf.bad != nil {
		return cf.bad
	}
	if cf.m.Dropped.Load() {
		return fmt.Errorf("%w: %q: %w", engine.ErrNotFound, cf.m.Name, errDropped)
	}
	return nil
}

// gone marks the handle's column family as dropped (its catalog row is
// gone, or belongs to a column family created since under the same name)
// and returns the error every later call gets.
func (cf *ColumnFamily) gone() error {
	cf.m.Dropped.Store(true)
	return cf.alive()
}

// current checks, on c (inside the caller's transaction), that the
// column family is still the one the handle was opened on: a handle never
// writes into a column family of the same name created after its own was
// dropped, by this process or another.
func (cf *ColumnFamily) current(ctx context.Context, c *engine.Conn) error {
	n, err := c.QueryInt(ctx, cf.m.Writing().SQL.Current, cf.m.NameArg, cf.m.StampArg)
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
	sh := cf.m.Writing()
	// A key with a TTL may have expired: that delete reports ErrNotFound,
	// which the SQL statements decide.
	ok, found, err := c.Delete(&sh.Objects, key, false)
	if found {
		n = 1
	}
	return n, ok || err != nil, err
}

// writeConn returns the connection a single-statement write runs on: the
// transaction's, or the writer (give it back with doneWrite). The caller
// has checked the handle (alive).
func (cf *ColumnFamily) writeConn() (*engine.Conn, context.Context, error) {
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

func (cf *ColumnFamily) update(op string, fn func(ctx context.Context, c *engine.Conn, tx *engine.Tx) error) error {
	if err := cf.alive(); err != nil {
		return err
	}
	return cf.m.Env.Update(context.Background(), cf.tx, cf.m.Name+": "+op, func(ctx context.Context, tx *engine.Tx) error {
		if err := cf.verify(ctx, tx); err != nil {
			return err
		}
		return fn(ctx, tx.Conn(), tx)
	})
}

// Put stores value under key, replacing any previous value and removing any
// TTL the key had (the key becomes permanent). A nil value is stored as an
// empty one.
func (cf *ColumnFamily) Put(key, value []byte) error {
	if err := cf.alive(); err != nil {
		return err
	}
	if err := rowcodec.CheckKV(key, value, cf.m.Env.MaxValueSize); err != nil {
		return err
	}
	c, ctx, err := cf.writeConn()
	if err != nil {
		return cf.errf(ctx, "put", err)
	}
	sh := cf.m.Writing()
	cd := cf.m.Codec(sh)
	var n int64
	if cf.tx != nil {
		// In a transaction the column family is checked once, and each
		// put is a plain upsert, below SQL when the engine can.
		if err = cf.verify(ctx, cf.tx); err == nil {
			n, err = 1, cd.Put(ctx, c, key, value)
			err = cf.feed(ctx, cf.tx, err, changelog.OpPut, key, value, changelog.NoExpiry)
		}
	} else {
		gen, fed := cf.alone(c, &sh.SQL)
		if fed {
			return cf.putFed(key, value)
		}
		if aloneHook != nil {
			aloneHook()
		}
		// Alone, one statement writes the row (encoded as in a
		// transaction) and checks the catalog and the feeds' generation.
		stored, sum := cd.Encode(c, key, value, false)
		if sh.SQL.FeedsGen {
			n, err = c.Exec(ctx, sh.SQL.Put, key, stored, cf.m.NameArg, cf.m.StampArg, sum, gen)
		} else {
			n, err = c.Exec(ctx, sh.SQL.Put, key, stored, cf.m.NameArg, cf.m.StampArg, sum)
		}
		if err == nil && n == 0 && gen != nil {
			// Dropped, or the feeds moved: a transaction decides which.
			cf.db().ReleaseWriter(c)
			return cf.putFed(key, value)
		}
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
	if err := rowcodec.CheckKV(key, value, cf.m.Env.MaxValueSize); err != nil {
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
	if err := rowcodec.CheckKV(key, value, cf.m.Env.MaxValueSize); err != nil {
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
		sh := cf.m.Writing()
		if _, err := c.Exec(ctx, sh.SQL.LazyDel, key, expiry.Encode(cf.nowMs())); err != nil {
			return err
		}
		cd := cf.m.Codec(sh)
		stored, sum := cd.Encode(c, key, value, expMs >= 0)
		n, err := c.Exec(ctx, sh.SQL.Insert, key, stored, cf.m.NameArg, cf.m.StampArg, sum)
		if err != nil || n == 0 {
			return err
		}
		wrote = true
		if err := cf.feed(ctx, tx, nil, changelog.OpPut, key, value, expMs); err != nil {
			return err
		}
		if expMs >= 0 {
			return cf.m.SetExpiry(ctx, c, tx, key, -1, expMs)
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
	if err := rowcodec.CheckKey(key); err != nil {
		return err
	}
	c, ctx, err := cf.writeConn()
	if err != nil {
		return cf.errf(ctx, "delete", err)
	}
	n, fast, err := cf.deleteInTx(ctx, c, key)
	if !fast && err == nil {
		q := &cf.m.Writing().SQL
		var gen any
		if cf.tx == nil {
			var fed bool
			if gen, fed = cf.alone(c, q); fed {
				return cf.deleteFed(key)
			}
			if aloneHook != nil {
				aloneHook()
			}
		}
		nowMs := cf.nowMs()
		now := expiry.Encode(nowMs)
		if q.FeedsGen {
			n, err = c.Exec(ctx, q.DelLive, key, now, cf.m.NameArg, cf.m.StampArg, gen)
		} else {
			n, err = c.Exec(ctx, q.DelLive, key, now, cf.m.NameArg, cf.m.StampArg)
		}
		if err == nil && n == 0 && gen != nil {
			// Missing, expired, dropped, or the feeds moved: a
			// transaction decides which.
			cf.db().ReleaseWriter(c)
			return cf.deleteFed(key)
		}
		if err == nil && n == 0 {
			err = cf.current(ctx, c)
		}
		if err == nil && n == 0 && cf.tx != nil {
			// An expired key that goes is the feed's expiry (a column
			// family without TTL tables has none).
			if err = cf.feedLazy([][]byte{key}, nowMs); engine.NoSuchTable(err) {
				err = nil
			}
		}
		if err == nil && n == 0 {
			// Missing, or expired: an expired key goes all the same.
			_, err = c.Exec(ctx, q.LazyDel, key, now)
		}
	}
	if cf.tx != nil && n > 0 {
		err = cf.feed(ctx, cf.tx, err, changelog.OpDelete, key, nil, changelog.NoExpiry)
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

// Clear removes every key of the column family, and its TTL state, in one
// transaction.
func (cf *ColumnFamily) Clear() error {
	return cf.update("clear", func(ctx context.Context, c *engine.Conn, tx *engine.Tx) error {
		t := &cf.m.Writing().Objects
		on, err := expiry.Enabled(ctx, c, t)
		if err != nil {
			return err
		}
		if on {
			for _, q := range []string{`DELETE FROM ` + t.Quoted.Expiry, `DELETE FROM ` + t.Quoted.Keys} {
				if _, err := c.Exec(ctx, q); err != nil {
					return err
				}
			}
		}
		_, err = c.Exec(ctx, `DELETE FROM `+t.Quoted.Data)
		return cf.feed(ctx, tx, err, changelog.OpDeleteRange, []byte{}, nil, changelog.NoExpiry)
	})
}

// feed records op on key in the column family's feed, if it has one,
// inside tx, unless the write before it failed (err, returned as is).
func (cf *ColumnFamily) feed(ctx context.Context, tx *engine.Tx, err error, op changelog.Op, key, value []byte, expMs int64) error {
	if err != nil || cf.m.Env.Feeds == nil {
		return err
	}
	return cf.m.Env.Feeds.Record(ctx, tx, cf.m.Name, op, key, value, expMs)
}

// Point reads: below SQL when the engine can (engine.Conn.QueryPoint),
// each row read and checked by the column family's codec
// (internal/rowcodec), an expired key reported missing and expired lazily
// (read.go).

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

// The columns of the point reads' statements (layout.Queries.Get and
// Exists), in a table with checksum columns and in one without.
var (
	getCols      = rowcodec.Cols{Key: -1, Value: layout.GetValue, Expiry: layout.GetExpiry, Crc: layout.GetCrc, Ecrc: layout.GetEcrc}
	getColsV1    = rowcodec.Cols{Key: -1, Value: layout.GetValue, Expiry: layout.GetExpiry, Crc: -1, Ecrc: -1}
	existsCols   = rowcodec.Cols{Key: -1, Value: -1, Expiry: layout.ExistsExpiry, Crc: -1, Ecrc: layout.ExistsEcrc}
	existsColsV1 = rowcodec.Cols{Key: -1, Value: -1, Expiry: layout.ExistsExpiry, Crc: -1, Ecrc: -1}
)

// lookup reads key's value (when withValue) and expiry. expMs is -1 for a
// key without TTL. An expired key is reported as ErrNotFound and expired
// lazily.
func (cf *ColumnFamily) lookup(key []byte, withValue bool) (value []byte, expMs int64, err error) {
	if err := cf.alive(); err != nil {
		return nil, 0, err
	}
	if err := rowcodec.CheckKey(key); err != nil {
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
	if expMs >= 0 {
		// Only a key with an expiry reads the clock.
		if now := cf.nowMs(); expiry.Expired(expMs, now) {
			st.Misses.Add(1)
			cf.expired([][]byte{key}, now)
			return nil, 0, engine.ErrNotFound
		}
	}
	st.Hits.Add(1)
	if withValue {
		value = rowcodec.NonNil(value)
		st.BytesRead.Add(uint64(len(value)))
	}
	return value, expMs, nil
}

// readRow reads key's row on c: its value in the clear (a copy, when
// withValue) and its expiry (-1 for none), straight off the statement or,
// when the engine can, off the B-trees below SQL (engine.QueryPoint), so
// that the value is copied once and the expiry decoded in place. found is
// false for a missing key.
func (cf *ColumnFamily) readRow(ctx context.Context, c *engine.Conn, key []byte, withValue bool) (value []byte, expMs int64, found bool, err error) {
	sh := cf.m.Reading()
	q, spec, cols := sh.SQL.Exists, &sh.ExistsPoint, &existsCols
	if withValue {
		q, spec, cols = sh.SQL.Get, &sh.GetPoint, &getCols
	}
	if !sh.Objects.Crc {
		cols = &existsColsV1
		if withValue {
			cols = &getColsV1
		}
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
	if found = rows.Next(); found {
		cd := cf.m.Codec(sh)
		cd.Ctx, cd.Conn = ctx, c
		var b rowcodec.Buffers
		_, value, expMs, err = cd.Decode(rows, cols, true, rowcodec.AnyTime, key, rowcodec.CopyValue, &b)
	}
	return value, expMs, found, errors.Join(err, rows.Close())
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

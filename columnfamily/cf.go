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
	if err := cf.m.Env.CheckKV(key, value); err != nil {
		return err
	}
	c, ctx, err := cf.writeConn()
	if err != nil {
		return cf.errf(ctx, "put", err)
	}
	sh := cf.m.Writing()
	var n int64
	if cf.tx != nil {
		// In a transaction the column family is checked once, and each
		// put is a plain upsert.
		if err = cf.verify(ctx, cf.tx); err == nil {
			n, err = cf.m.Upsert(ctx, c, sh, key, value)
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
		stored, sum := cf.m.Encode(c, sh, key, value, false)
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
	if err := cf.m.Env.CheckKV(key, value); err != nil {
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
	if err := cf.m.Env.CheckKV(key, value); err != nil {
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
		stored, sum := cf.m.Encode(c, sh, key, value, expMs >= 0)
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
	if err := family.CheckKey(key); err != nil {
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

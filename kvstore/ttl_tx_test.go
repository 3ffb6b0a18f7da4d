package kvstore_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TTL writes in transactions: committed together, rolled back together
// (the first TTL write of a column family included), refused inside View.

func TestTTLTransactionCommit(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	db := f.db
	cf := f.cf(t, "sessions")
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, tx.PutTTL([]byte("a"), []byte("1"), time.Minute))
		require.NoError(t, tx.CF(cf).PutTTL([]byte("b"), []byte("2"), 2*time.Minute))
		require.NoError(t, tx.Put([]byte("c"), []byte("3")))
		// The transaction sees its own TTL writes.
		d, err := tx.TTL([]byte("a"))
		require.NoError(t, err)
		require.Equal(t, time.Minute, d)
		v, d, err := tx.CF(cf).GetTTL([]byte("b"))
		require.NoError(t, err)
		require.Equal(t, "2", string(v))
		require.Equal(t, 2*time.Minute, d)
		// Nobody else does before the commit.
		_, err = db.Get([]byte("a"))
		require.ErrorIs(t, err, kvstore.ErrNotFound)
		require.Equal(t, [3]int64{0, 0, 0}, ttlKeyRows(t, f.path, ttlDef, "a"))
		return nil
	}))
	ttlHas(t, db.Default(), "a", time.Minute)
	ttlHas(t, cf, "b", 2*time.Minute)
	ttlHas(t, db.Default(), "c", kvstore.NoTTL)
	require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, ttlDef, "a"))
	require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, "sessions", "b"))

	// Explicit Begin/Commit.
	tx, err := db.Begin(ctx, true)
	require.NoError(t, err)
	require.NoError(t, tx.CF(cf).PutTTL([]byte("d"), []byte("4"), time.Second))
	require.NoError(t, tx.Commit())
	ttlHas(t, cf, "d", time.Second)
	f.clk.Advance(time.Second)
	ttlGone(t, cf, "d")
}

// The reference breaks every later TTL write when the first TTL write of a
// column family is rolled back; here the rollback leaves nothing behind and
// later TTL writes work.
func TestTTLTransactionRollback(t *testing.T) {
	ctx := context.Background()
	errAbort := errors.New("abort")
	f := newTTLFixture(t)
	db := f.db
	fresh := f.cf(t, "fresh")
	require.NoError(t, fresh.Put([]byte("plain"), []byte("p")))

	// First TTL write of both column families, rolled back by Update.
	err := db.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, tx.PutTTL([]byte("a"), []byte("1"), time.Minute))
		require.NoError(t, tx.CF(fresh).PutTTL([]byte("b"), []byte("2"), time.Minute))
		require.NoError(t, tx.CF(fresh).Expire([]byte("plain"), time.Minute))
		ttlHas(t, tx.CF(fresh), "plain", time.Minute)
		return errAbort
	})
	require.ErrorIs(t, err, errAbort)
	ttlGone(t, db.Default(), "a")
	ttlGone(t, fresh, "b")
	ttlHas(t, fresh, "plain", kvstore.NoTTL)
	require.False(t, fresh.HasTTL())
	require.False(t, db.HasTTL())
	require.Empty(t, ttlHidden(t, f.path, "fresh"), "the hidden tables were rolled back")
	require.Empty(t, ttlHidden(t, f.path, ttlDef))

	// Explicit Begin/Rollback, again as the first TTL write.
	tx, err := db.Begin(ctx, true)
	require.NoError(t, err)
	require.NoError(t, tx.CF(fresh).PutTTL([]byte("c"), []byte("3"), time.Minute))
	require.NoError(t, tx.Rollback())
	ttlGone(t, fresh, "c")
	require.False(t, fresh.HasTTL())
	require.Empty(t, ttlHidden(t, f.path, "fresh"))

	// Later TTL writes work, outside and inside transactions.
	require.NoError(t, fresh.PutTTL([]byte("d"), []byte("4"), time.Minute))
	ttlHas(t, fresh, "d", time.Minute)
	require.True(t, fresh.HasTTL())
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		return tx.PutTTL([]byte("e"), []byte("5"), time.Minute)
	}))
	ttlHas(t, db.Default(), "e", time.Minute)
	require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, "fresh", "d"))
	require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, ttlDef, "e"))

	// A rolled-back TTL write on a column family that already has TTL
	// tables leaves no rows and keeps the tables.
	err = db.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, tx.CF(fresh).PutTTL([]byte("f"), []byte("6"), time.Minute))
		require.NoError(t, tx.CF(fresh).PutTTL([]byte("d"), []byte("changed"), time.Hour))
		return errAbort
	})
	require.ErrorIs(t, err, errAbort)
	ttlGone(t, fresh, "f")
	ttlGet(t, fresh, "d", "4")
	ttlHas(t, fresh, "d", time.Minute)
	require.True(t, fresh.HasTTL())
	require.Equal(t, [3]int64{2, 1, 1}, ttlCounts(t, f.path, "fresh"))

	// Expiry still works on what was committed.
	f.clk.Advance(time.Minute)
	ttlGone(t, fresh, "d")
	ttlGone(t, db.Default(), "e")
}

func TestExpireInsideTransaction(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	require.NoError(t, f.db.Put([]byte("k"), []byte("v")))
	require.NoError(t, f.db.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, tx.Expire([]byte("k"), time.Minute))
		ttlHas(t, tx.Default(), "k", time.Minute)
		require.NoError(t, tx.Persist([]byte("k")))
		ttlHas(t, tx.Default(), "k", kvstore.NoTTL)
		return tx.Expire([]byte("k"), 2*time.Minute)
	}))
	ttlHas(t, f.db.Default(), "k", 2*time.Minute)
	require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, ttlDef, "k"))
}

// Writes inside View fail with ErrReadOnlyTx, write nothing, and leave the
// View usable; nothing is auto-committed.
func TestTTLWritesInsideViewFail(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "fresh")
	require.NoError(t, f.db.PutTTL([]byte("t"), []byte("v"), time.Minute))
	require.NoError(t, f.db.Put([]byte("p"), []byte("v")))
	f.clk.Advance(30 * time.Second)
	commits := f.stats(t).Commits
	future := f.clk.Now().Add(time.Hour)
	require.NoError(t, f.db.View(ctx, func(tx *kvstore.Tx) error {
		for _, h := range []*kvstore.ColumnFamily{tx.Default(), tx.CF(cf)} {
			writes := map[string]func() error{
				"Put":         func() error { return h.Put([]byte("x"), []byte("v")) },
				"PutTTL":      func() error { return h.PutTTL([]byte("x"), []byte("v"), time.Minute) },
				"PutExpireAt": func() error { return h.PutExpireAt([]byte("x"), []byte("v"), future) },
				"Delete":      func() error { return h.Delete([]byte("p")) },
				"Expire":      func() error { return h.Expire([]byte("p"), time.Minute) },
				"ExpireAt":    func() error { return h.ExpireAt([]byte("p"), future) },
				"Persist":     func() error { return h.Persist([]byte("t")) },
				"PutIfAbsent": func() error { _, err := h.PutIfAbsent([]byte("x"), []byte("v")); return err },
				"PutIfAbsentTTL": func() error {
					_, err := h.PutIfAbsentTTL([]byte("x"), []byte("v"), time.Minute)
					return err
				},
				"PurgeExpired":  func() error { _, err := h.PurgeExpired(ctx); return err },
				"PurgeExpiredN": func() error { _, err := h.PurgeExpiredN(ctx, 5); return err },
				"Clear":         func() error { return h.Clear() },
				"Apply": func() error {
					var batch kvstore.Batch
					batch.PutTTL([]byte("x"), []byte("v"), time.Minute)
					return h.Apply(ctx, &batch)
				},
			}
			for name, w := range writes {
				require.ErrorIs(t, w(), kvstore.ErrReadOnlyTx, "%s on %s", name, h.Name())
			}
		}
		// The View is still usable.
		ttlHas(t, tx.Default(), "t", 30*time.Second)
		ttlGet(t, tx.Default(), "p", "v")
		return nil
	}))
	require.Equal(t, commits, f.stats(t).Commits, "nothing was committed")
	ttlGone(t, f.db.Default(), "x")
	ttlGet(t, f.db.Default(), "p", "v")
	ttlHas(t, f.db.Default(), "t", 30*time.Second)
	ttlHas(t, f.db.Default(), "p", kvstore.NoTTL)
	require.False(t, cf.HasTTL())
	require.Empty(t, ttlHidden(t, f.path, "fresh"))
}

// A function given to Update that ends its goroutine (runtime.Goexit, as
// t.FailNow does) rolls the transaction back, TTL state included, and frees
// the writer.
func TestTTLUpdateGoexitRollsBack(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "fresh")
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.db.Update(ctx, func(tx *kvstore.Tx) error {
			if err := tx.CF(cf).PutTTL([]byte("k"), []byte("v"), time.Minute); err != nil {
				return err
			}
			runtime.Goexit()
			return nil
		})
	}()
	<-done
	ttlGone(t, cf, "k")
	require.False(t, cf.HasTTL())
	require.Empty(t, ttlHidden(t, f.path, "fresh"))
	require.NoError(t, cf.PutTTL([]byte("k2"), []byte("v"), time.Minute), "the writer is free")
	ttlHas(t, cf, "k2", time.Minute)
}

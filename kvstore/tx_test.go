package kvstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// twoCFs returns a store with a named column family "users" and both hold
// one key.
func twoCFs(t *testing.T, opts kvstore.Options) (*kvstore.Store, *kvstore.ColumnFamily) {
	t.Helper()
	db := openTemp(t, opts)
	users, err := db.CreateColumnFamily("users")
	require.NoError(t, err)
	require.NoError(t, db.Put(b("d"), b("0")))
	require.NoError(t, users.Put(b("u"), b("0")))
	return db, users
}

func TestUpdateCommits(t *testing.T) {
	ctx := context.Background()
	db, users := twoCFs(t, kvstore.Options{})
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		require.True(t, tx.Writable())
		require.Equal(t, ctx, tx.Context())
		u := tx.CF(users)
		require.NoError(t, tx.Put(b("d"), b("1")))
		require.NoError(t, tx.Put(b("d2"), b("2")))
		require.NoError(t, u.Put(b("u"), b("1")))
		require.NoError(t, u.Delete(b("u")))
		require.NoError(t, u.Put(b("u2"), b("2")))
		var bt kvstore.Batch
		bt.Put(b("u3"), b("3"))
		return u.Apply(ctx, &bt)
	}))
	require.Equal(t, []kv{{"d", "1"}, {"d2", "2"}}, contents(t, db.Default()))
	require.Equal(t, []kv{{"u2", "2"}, {"u3", "3"}}, contents(t, users))
}

func TestUpdateRollsBackOnError(t *testing.T) {
	ctx := context.Background()
	db, users := twoCFs(t, kvstore.Options{})
	boom := errors.New("boom")
	err := db.Update(ctx, func(tx *kvstore.Tx) error {
		u := tx.CF(users)
		require.NoError(t, tx.Put(b("d"), b("changed")))
		require.NoError(t, tx.Put(b("new"), b("x")))
		require.NoError(t, u.Clear())
		require.NoError(t, tx.Delete(b("d")))
		return boom
	})
	require.ErrorIs(t, err, boom, "Update returns fn's error")
	require.Equal(t, []kv{{"d", "0"}}, contents(t, db.Default()))
	require.Equal(t, []kv{{"u", "0"}}, contents(t, users))
	require.NoError(t, db.Put(b("after"), b("ok")), "the writer was released")
}

func TestUpdateRollsBackOnPanic(t *testing.T) {
	ctx := context.Background()
	db, users := twoCFs(t, kvstore.Options{BusyTimeout: time.Second})
	require.PanicsWithValue(t, "kaboom", func() {
		_ = db.Update(ctx, func(tx *kvstore.Tx) error {
			require.NoError(t, tx.Put(b("d"), b("changed")))
			require.NoError(t, tx.CF(users).Put(b("u2"), b("x")))
			panic("kaboom")
		})
	})
	require.Equal(t, []kv{{"d", "0"}}, contents(t, db.Default()))
	require.Equal(t, []kv{{"u", "0"}}, contents(t, users))
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error { return tx.Put(b("after"), b("ok")) }),
		"the writer was released")
}

// TestViewSnapshot: a read transaction sees the store as it was when it
// began, whatever is committed meanwhile.
func TestViewSnapshot(t *testing.T) {
	ctx := context.Background()
	db, users := twoCFs(t, kvstore.Options{})
	require.NoError(t, users.Put(b("u2"), b("0")))
	started := make(chan struct{})
	committed := make(chan error)
	go func() {
		<-started
		committed <- db.Update(ctx, func(tx *kvstore.Tx) error {
			if err := tx.Put(b("d"), b("1")); err != nil {
				return err
			}
			if err := tx.Put(b("d-new"), b("1")); err != nil {
				return err
			}
			u := tx.CF(users)
			if err := u.Delete(b("u")); err != nil {
				return err
			}
			return u.Put(b("u3"), b("1"))
		})
	}()
	require.NoError(t, db.View(ctx, func(tx *kvstore.Tx) error {
		require.False(t, tx.Writable())
		u := tx.CF(users)
		v, err := tx.Get(b("d"))
		require.NoError(t, err)
		require.Equal(t, b("0"), v)
		close(started)
		require.NoError(t, <-committed)

		// Outside the transaction the commit is visible...
		v, err = db.Get(b("d"))
		require.NoError(t, err)
		require.Equal(t, b("1"), v)
		// ...inside it is not, through any read path.
		v, err = tx.Get(b("d"))
		require.NoError(t, err)
		require.Equal(t, b("0"), v)
		ok, err := tx.Exists(b("d-new"))
		require.NoError(t, err)
		require.False(t, ok)
		vs, err := u.GetMany([][]byte{b("u"), b("u3")})
		require.NoError(t, err)
		require.Equal(t, [][]byte{b("0"), nil}, vs)
		n, err := u.Count()
		require.NoError(t, err)
		require.EqualValues(t, 2, n)
		require.Equal(t, []kv{{"u", "0"}, {"u2", "0"}}, collect(t, u.All()))
		require.Equal(t, []kv{{"d", "0"}}, collect(t, tx.Backward()))
		return nil
	}))
	require.Equal(t, []kv{{"u2", "0"}, {"u3", "1"}}, contents(t, users))
}

// TestReadYourOwnWrites: inside a write transaction every read path sees
// the transaction's writes, in every column family; outside, nothing shows
// until the commit.
func TestReadYourOwnWrites(t *testing.T) {
	ctx := context.Background()
	db, users := twoCFs(t, kvstore.Options{})
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		u := tx.CF(users)
		require.NoError(t, tx.Put(b("d"), b("1")))
		require.NoError(t, u.Put(b("u2"), b("new")))
		require.NoError(t, u.Delete(b("u")))
		wrote, err := u.PutIfAbsent(b("u2"), b("other"))
		require.NoError(t, err)
		require.False(t, wrote, "sees its own earlier put")

		v, err := tx.Get(b("d"))
		require.NoError(t, err)
		require.Equal(t, b("1"), v)
		_, err = u.Get(b("u"))
		require.ErrorIs(t, err, kvstore.ErrNotFound)
		ok, err := u.Exists(b("u2"))
		require.NoError(t, err)
		require.True(t, ok)
		n, err := u.Count()
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		vs, err := u.GetMany([][]byte{b("u"), b("u2")})
		require.NoError(t, err)
		require.Equal(t, [][]byte{nil, b("new")}, vs)
		require.Equal(t, []kv{{"u2", "new"}}, collect(t, u.All()))
		cur, err := u.Cursor(kvstore.IterOptions{Reverse: true})
		require.NoError(t, err)
		require.True(t, cur.First())
		require.Equal(t, b("u2"), cur.Key())
		require.NoError(t, cur.Close())

		// Other readers do not see uncommitted writes.
		v, err = db.Get(b("d"))
		require.NoError(t, err)
		require.Equal(t, b("0"), v)
		require.Equal(t, []kv{{"u", "0"}}, contents(t, users))
		return nil
	}))
	require.Equal(t, []kv{{"d", "1"}}, contents(t, db.Default()))
	require.Equal(t, []kv{{"u2", "new"}}, contents(t, users))
}

// TestWriteInView: writes inside a read-only transaction fail with
// ErrReadOnlyTx, write nothing and leave the transaction usable.
func TestWriteInView(t *testing.T) {
	ctx := context.Background()
	db, users := twoCFs(t, kvstore.Options{})
	require.NoError(t, db.View(ctx, func(tx *kvstore.Tx) error {
		u := tx.CF(users)
		writes := map[string]func() error{
			"Put":         func() error { return tx.Put(b("x"), b("1")) },
			"named Put":   func() error { return u.Put(b("x"), b("1")) },
			"Delete":      func() error { return tx.Delete(b("d")) },
			"PutIfAbsent": func() error { _, err := u.PutIfAbsent(b("x"), b("1")); return err },
			"PutTTL":      func() error { return tx.PutTTL(b("x"), b("1"), time.Hour) },
			"Clear":       func() error { return u.Clear() },
			"Apply":       func() error { var bt kvstore.Batch; bt.Put(b("x"), b("1")); return u.Apply(ctx, &bt) },
		}
		for name, write := range writes {
			require.ErrorIs(t, write(), kvstore.ErrReadOnlyTx, name)
		}
		v, err := tx.Get(b("d"))
		require.NoError(t, err, "the transaction is still usable")
		require.Equal(t, b("0"), v)
		return nil
	}))
	require.Equal(t, []kv{{"d", "0"}}, contents(t, db.Default()))
	require.Equal(t, []kv{{"u", "0"}}, contents(t, users))
}

func TestExplicitTransactions(t *testing.T) {
	ctx := context.Background()
	db, users := twoCFs(t, kvstore.Options{})

	tx, err := db.Begin(ctx, true)
	require.NoError(t, err)
	require.NoError(t, tx.Put(b("d"), b("committed")))
	require.NoError(t, tx.CF(users).Put(b("u"), b("committed")))
	require.NoError(t, tx.Commit())
	require.ErrorIs(t, tx.Commit(), kvstore.ErrTxDone, "double commit")
	require.ErrorIs(t, tx.Rollback(), kvstore.ErrTxDone, "rollback after commit")
	require.ErrorIs(t, tx.Put(b("late"), b("x")), kvstore.ErrTxDone)
	_, err = tx.Get(b("d"))
	require.ErrorIs(t, err, kvstore.ErrTxDone)
	_, err = tx.CF(users).Count()
	require.ErrorIs(t, err, kvstore.ErrTxDone)
	require.ErrorIs(t, firstErr(tx.All()), kvstore.ErrTxDone)

	tx, err = db.Begin(ctx, true)
	require.NoError(t, err)
	require.NoError(t, tx.Put(b("d"), b("rolled back")))
	require.NoError(t, tx.Put(b("gone"), b("x")))
	require.NoError(t, tx.Rollback())
	require.ErrorIs(t, tx.Rollback(), kvstore.ErrTxDone, "double rollback")
	require.ErrorIs(t, tx.Commit(), kvstore.ErrTxDone, "commit after rollback")

	rtx, err := db.Begin(ctx, false)
	require.NoError(t, err)
	require.False(t, rtx.Writable())
	v, err := rtx.Get(b("d"))
	require.NoError(t, err)
	require.Equal(t, b("committed"), v)
	require.NoError(t, rtx.Commit())
	require.ErrorIs(t, rtx.Commit(), kvstore.ErrTxDone)

	require.Equal(t, []kv{{"d", "committed"}}, contents(t, db.Default()))
	require.Equal(t, []kv{{"u", "committed"}}, contents(t, users))
}

// TestWritersAreSerialized: a second writer waits for the first, and gives
// up with ErrBusy after the busy timeout.
func TestWritersAreSerialized(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t, kvstore.Options{BusyTimeout: 100 * time.Millisecond})
	tx, err := db.Begin(ctx, true)
	require.NoError(t, err)
	require.NoError(t, tx.Put(b("k"), b("tx")))

	st0, err := db.Stats(ctx)
	require.NoError(t, err)
	done := make(chan error)
	go func() { done <- db.Put(b("k"), b("other")) }()
	require.ErrorIs(t, <-done, kvstore.ErrBusy)
	st1, err := db.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, st0.BusyErrors+1, st1.BusyErrors)

	go func() {
		done <- db.Update(ctx, func(tx *kvstore.Tx) error { return tx.Put(b("k2"), b("second")) })
	}()
	require.NoError(t, tx.Commit())
	// The second Update may have timed out before the commit on a slow
	// machine; it must never have run inside the first transaction.
	if err := <-done; err != nil {
		require.ErrorIs(t, err, kvstore.ErrBusy)
	}
	v, err := db.Get(b("k"))
	require.NoError(t, err)
	require.Equal(t, b("tx"), v)
}

// TestOnCommit: hooks run after a successful commit, in order, with the
// data visible and the writer free; never after a rollback.
func TestOnCommit(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t, kvstore.Options{BusyTimeout: time.Second})
	var order []string
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		tx.OnCommit(func() {
			v, err := db.Get(b("k"))
			require.NoError(t, err)
			require.Equal(t, b("v"), v, "the commit is visible to the hook")
			require.NoError(t, db.Put(b("from-hook"), b("1")), "the writer is free in the hook")
			order = append(order, "first")
		})
		tx.OnCommit(func() { order = append(order, "second") })
		require.Empty(t, order, "not before the commit")
		return tx.Put(b("k"), b("v"))
	}))
	require.Equal(t, []string{"first", "second"}, order)
	ok, err := db.Exists(b("from-hook"))
	require.NoError(t, err)
	require.True(t, ok)

	ran := false
	require.Error(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		tx.OnCommit(func() { ran = true })
		return errors.New("abort")
	}))
	require.PanicsWithValue(t, "p", func() {
		_ = db.Update(ctx, func(tx *kvstore.Tx) error {
			tx.OnCommit(func() { ran = true })
			panic("p")
		})
	})
	tx, err := db.Begin(ctx, true)
	require.NoError(t, err)
	tx.OnCommit(func() { ran = true })
	require.NoError(t, tx.Put(b("x"), b("y")))
	require.NoError(t, tx.Rollback())
	require.ErrorIs(t, tx.Commit(), kvstore.ErrTxDone)
	require.False(t, ran, "OnCommit never runs after a rollback")
}

// TestForeignHandle: a column family handle of one store cannot be bound
// to another store's transaction.
func TestForeignHandle(t *testing.T) {
	ctx := context.Background()
	a := openTemp(t, kvstore.Options{})
	other := openTemp(t, kvstore.Options{})
	foreign, err := other.CreateColumnFamily("users")
	require.NoError(t, err)
	require.NoError(t, foreign.Put(b("k"), b("theirs")))
	_, err = a.CreateColumnFamily("users")
	require.NoError(t, err)
	err = a.Update(ctx, func(tx *kvstore.Tx) error {
		h := tx.CF(foreign)
		_, err := h.Get(b("k"))
		require.ErrorIs(t, err, kvstore.ErrForeignHandle)
		require.ErrorIs(t, firstErr(h.All()), kvstore.ErrForeignHandle)
		return h.Put(b("k"), b("mine"))
	})
	require.ErrorIs(t, err, kvstore.ErrForeignHandle)
	v, err := foreign.Get(b("k"))
	require.NoError(t, err)
	require.Equal(t, b("theirs"), v)
	mine, err := a.OpenColumnFamily("users")
	require.NoError(t, err)
	n, err := mine.Count()
	require.NoError(t, err)
	require.Zero(t, n)
}

// TestCancelledContext: a transaction is never begun under a context that
// has ended, and fn never runs.
func TestCancelledContext(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, writable := range []bool{true, false} {
		tx, err := db.Begin(ctx, writable)
		require.ErrorIs(t, err, context.Canceled, "writable %v", writable)
		require.Nil(t, tx)
	}
	called := false
	fn := func(*kvstore.Tx) error { called = true; return nil }
	require.ErrorIs(t, db.Update(ctx, fn), context.Canceled)
	require.ErrorIs(t, db.View(ctx, fn), context.Canceled)
	require.False(t, called)
	require.NoError(t, db.Put(b("k"), b("v")), "the store is still usable")

	// A context that ends while Begin waits for the writer.
	tx, err := db.Begin(context.Background(), true)
	require.NoError(t, err)
	wctx, wcancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	var waitErr error
	go func() {
		defer wg.Done()
		_, waitErr = db.Begin(wctx, true)
	}()
	wcancel()
	wg.Wait()
	require.ErrorIs(t, waitErr, context.Canceled)
	require.NoError(t, tx.Rollback())
}

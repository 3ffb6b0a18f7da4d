package kvstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TestOnRollback: rollback hooks run, in order, for every way a
// transaction ends without committing, and never after a commit; for each
// transaction exactly one of OnCommit's and OnRollback's sets runs.
func TestOnRollback(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t, kvstore.Options{})
	var got []string
	hooks := func(tx *kvstore.Tx, name string) {
		tx.OnCommit(func() { got = append(got, name+" committed") })
		tx.OnRollback(func() { got = append(got, name+" rolled back") })
		tx.OnRollback(func() { got = append(got, name+" rolled back 2") })
		tx.OnRollback(nil)
	}
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		hooks(tx, "commit")
		return tx.Put(b("k"), b("v"))
	}))
	require.Error(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		hooks(tx, "error")
		require.NoError(t, tx.Put(b("k2"), b("v")))
		return errors.New("abort")
	}))
	require.PanicsWithValue(t, "p", func() {
		_ = db.Update(ctx, func(tx *kvstore.Tx) error {
			hooks(tx, "panic")
			panic("p")
		})
	})
	tx, err := db.Begin(ctx, true)
	require.NoError(t, err)
	hooks(tx, "explicit")
	require.NoError(t, tx.Rollback())
	require.ErrorIs(t, tx.Rollback(), kvstore.ErrTxDone)
	require.Equal(t, []string{
		"commit committed",
		"error rolled back", "error rolled back 2",
		"panic rolled back", "panic rolled back 2",
		"explicit rolled back", "explicit rolled back 2",
	}, got)
	var nilTx *kvstore.Tx
	nilTx.OnRollback(func() {}) // no panic
}

// TestHookPanic: a hook that panics does not wedge the store. The panic
// goes on from the call that ended the transaction, but only once the
// transaction's end is done: its connection is back in the pool and the
// other hooks (the store's own among them) ran. Before, a panicking
// rollback hook kept the writer's connection for good: every later write
// failed with ErrBusy and Close never returned.
func TestHookPanic(t *testing.T) {
	ctx := context.Background()
	// Not tempstore: its cleanup's Close would hang on a wedged store.
	db, err := kvstore.Open(filepath.Join(t.TempDir(), "hooks.db"), kvstore.Options{BusyTimeout: 200 * time.Millisecond})
	require.NoError(t, err)
	cf, err := db.CreateColumnFamily("sessions")
	require.NoError(t, err)
	var got []string
	require.PanicsWithValue(t, "rollback hook", func() {
		_ = db.Update(ctx, func(tx *kvstore.Tx) error {
			tx.OnRollback(func() { panic("rollback hook") })
			tx.OnRollback(func() { got = append(got, "rolled back") })
			// The first TTL of the column family: the store's own
			// rollback hook forgets its TTL state.
			require.NoError(t, tx.CF(cf).PutTTL(b("s"), b("v"), time.Hour))
			return errors.New("abort")
		})
	})
	require.Equal(t, []string{"rolled back"}, got, "the hooks after the panicking one ran")
	require.NoError(t, db.Put(b("k"), b("v")), "the writer is free")
	require.NoError(t, cf.Put(b("p"), b("v")))
	counts, err := db.CountKeys(ctx, "sessions")
	require.NoError(t, err)
	require.Equal(t, kvstore.KeyCounts{Name: "sessions", Stored: 1, Live: 1}, counts)

	got = nil
	require.PanicsWithValue(t, "commit hook", func() {
		_ = db.Update(ctx, func(tx *kvstore.Tx) error {
			tx.OnCommit(func() { panic("commit hook") })
			tx.OnCommit(func() { got = append(got, "committed") })
			return tx.Put(b("c"), b("v"))
		})
	})
	require.Equal(t, []string{"committed"}, got)
	v, err := db.Get(b("c"))
	require.NoError(t, err, "the transaction committed")
	require.Equal(t, "v", string(v))
	require.NoError(t, db.Put(b("k2"), b("v")))

	testutil.ReturnsWithin(t, 10*time.Second, "Close hangs", db.Close)
}

// TestHookAfterEndNeverRuns: a hook registered once its transaction has
// ended (a Tx kept past Update, or past its Commit or Rollback) is never
// called, neither at once nor by a later transaction.
func TestHookAfterEndNeverRuns(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t, kvstore.Options{})
	var kept *kvstore.Tx
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		kept = tx
		return tx.Put(b("k"), b("v"))
	}))
	ran := 0
	kept.OnCommit(func() { ran++ })
	kept.OnRollback(func() { ran++ })
	tx, err := db.Begin(ctx, true)
	require.NoError(t, err)
	require.NoError(t, tx.Rollback())
	tx.OnRollback(func() { ran++ })
	tx.OnCommit(func() { ran++ })
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error { return tx.Put(b("k2"), b("v")) }))
	require.Error(t, db.Update(ctx, func(tx *kvstore.Tx) error { return errors.New("abort") }))
	require.Zero(t, ran)
}

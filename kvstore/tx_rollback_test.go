package kvstore_test

import (
	"context"
	"errors"
	"testing"

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

package vector

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// The changes a transaction gathers are forgotten when it ends, committed
// or not.
func TestTransactionChangesAreForgotten(t *testing.T) {
	ctx := context.Background()
	db, err := kvstore.Open(filepath.Join(t.TempDir(), "v.db"), kvstore.Options{})
	require.NoError(t, err)
	defer db.Close()
	ix, err := Open(ctx, db, "v", Options{Dim: 2})
	require.NoError(t, err)
	defer ix.Close()
	pending := func() int {
		ix.txMu.Lock()
		defer ix.txMu.Unlock()
		return len(ix.txs)
	}
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, ix.In(tx).Put([]byte("a"), []float32{1, 0}, Put{}))
		require.NoError(t, ix.In(tx).Put([]byte("b"), []float32{0, 1}, Put{}))
		require.Equal(t, 1, pending(), "one entry for the transaction")
		return nil
	}))
	require.Zero(t, pending())
	require.Error(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, ix.In(tx).Put([]byte("c"), []float32{1, 1}, Put{}))
		return errors.New("abort")
	}))
	require.Zero(t, pending(), "a rollback forgets the changes")
	n, err := ix.Count(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n)
}

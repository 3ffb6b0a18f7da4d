package vector_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
)

// A closed index's error is the store's ErrClosed too, as the convention
// for layers has it (docs/architecture.md): code that checks for
// kvstore.ErrClosed treats a closed index and a closed store alike, and
// the message still names the index.
func TestErrClosedMatchesTheStores(t *testing.T) {
	ctx := context.Background()
	db, _ := tempStore(t, kvstore.Options{})
	ix := openIndex(t, db, "v", vector.Options{Dim: 2})
	require.NoError(t, ix.Close())
	err := ix.Close()
	require.ErrorIs(t, err, vector.ErrClosed)
	require.ErrorIs(t, err, kvstore.ErrClosed)
	require.Contains(t, err.Error(), "vector")
	_, err = ix.Search(ctx, []float32{1, 0}, vector.Query{K: 1})
	require.ErrorIs(t, err, kvstore.ErrClosed)
	require.NotErrorIs(t, kvstore.ErrNotFound, vector.ErrClosed)
}

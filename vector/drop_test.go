package vector_test

import (
	"testing"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/stretchr/testify/require"
)

// TestIndexUsedAfterDropSaysSo: every call of an Index whose index was
// dropped (by Drop, or dropped and created again) fails with ErrNoIndex;
// before, Contains answered false with no error and Get and Delete gave
// the ErrNotFound of a missing key, so a caller saw an empty index.
func TestIndexUsedAfterDropSaysSo(t *testing.T) {
	db, _ := tempStore(t, kvstore.Options{})
	ix := openIndex(t, db, "v", vector.Options{Dim: 2})
	require.NoError(t, ix.Put(ctx, []byte("a"), []float32{1, 0}, vector.Put{}))
	require.NoError(t, vector.Drop(ctx, db, "v"))
	check := func(what string) {
		_, err := ix.Contains(ctx, []byte("a"))
		require.ErrorIs(t, err, vector.ErrNoIndex, "%s: Contains", what)
		_, err = ix.Get(ctx, []byte("a"))
		require.ErrorIs(t, err, vector.ErrNoIndex, "%s: Get", what)
		require.ErrorIs(t, ix.Delete(ctx, []byte("a")), vector.ErrNoIndex, "%s: Delete", what)
		require.ErrorIs(t, ix.Put(ctx, []byte("b"), []float32{1, 0}, vector.Put{}), vector.ErrNoIndex, "%s: Put", what)
		_, err = ix.Search(ctx, []float32{1, 0}, vector.Query{})
		require.ErrorIs(t, err, vector.ErrNoIndex, "%s: Search", what)
		_, err = ix.Count(ctx)
		require.ErrorIs(t, err, vector.ErrNoIndex, "%s: Count", what)
		_, err = ix.Stats(ctx)
		require.ErrorIs(t, err, vector.ErrNoIndex, "%s: Stats", what)
		_, err = ix.PurgeExpired(ctx)
		require.ErrorIs(t, err, vector.ErrNoIndex, "%s: PurgeExpired", what)
		require.NoError(t, db.View(ctx, func(tx *kvstore.Tx) error {
			w := ix.In(tx)
			_, err := w.Search([]float32{1, 0}, vector.Query{})
			require.ErrorIs(t, err, vector.ErrNoIndex, "%s: Tx.Search", what)
			_, err = w.Contains([]byte("a"))
			require.ErrorIs(t, err, vector.ErrNoIndex, "%s: Tx.Contains", what)
			for _, err := range w.Scan(kvstore.IterOptions{}) {
				require.ErrorIs(t, err, vector.ErrNoIndex, "%s: Tx.Scan", what)
			}
			return nil
		}))
	}
	check("dropped")
	again := openIndex(t, db, "v", vector.Options{Dim: 2})
	require.NoError(t, again.Put(ctx, []byte("a"), []float32{1, 0}, vector.Put{}))
	check("dropped and created again")
	ok, err := again.Contains(ctx, []byte("a"))
	require.NoError(t, err)
	require.True(t, ok)
}

package vector_test

import (
	"math"
	"testing"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/stretchr/testify/require"
)

// TestHugeKAndEfAreBoundedByTheIndex: a K, Ef or Oversample far beyond the
// index's size asks for every vector, never for memory in proportion to
// the number (a K of math.MaxInt made a slice of that capacity and
// panicked; K times Oversample overflowed to a negative count and the
// search returned nothing).
func TestHugeKAndEfAreBoundedByTheIndex(t *testing.T) {
	db, _ := tempStore(t, kvstore.Options{})
	for _, st := range []vector.Storage{vector.F32, vector.Int8} {
		ix := openIndex(t, db, "v"+st.String(), vector.Options{Dim: 2, Storage: st})
		require.NoError(t, ix.PutBatch(ctx, []vector.Item{
			{Key: []byte("a"), Vector: []float32{1, 0}},
			{Key: []byte("b"), Vector: []float32{0, 1}},
			{Key: []byte("c"), Vector: []float32{1, 1}},
		}))
		for _, q := range []vector.Query{
			{K: math.MaxInt},
			{K: math.MaxInt/2 + 1},
			{K: 1 << 40, Oversample: 1 << 30},
			{K: 3, Ef: math.MaxInt},
			{K: 3, Oversample: math.MaxInt},
			{K: math.MaxInt, Where: map[string]string{}, Prefix: []byte{}},
			{K: math.MaxInt, Filter: func([]byte) bool { return true }},
		} {
			hits, err := ix.Search(ctx, []float32{1, 0}, q)
			require.NoError(t, err, "%s %+v", st, q)
			require.Equal(t, []string{"a", "c", "b"}, hitKeys(hits), "%s %+v", st, q)
			err = db.View(ctx, func(tx *kvstore.Tx) error {
				hits, err := ix.In(tx).Search([]float32{1, 0}, q)
				require.NoError(t, err)
				require.Equal(t, []string{"a", "c", "b"}, hitKeys(hits), "in a transaction: %s %+v", st, q)
				return nil
			})
			require.NoError(t, err)
		}
	}
}

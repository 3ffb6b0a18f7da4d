package vector_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
)

// Put, Get and Delete judge a key's size alike, as the store does: an
// empty key is ErrInvalidKey, a long one ErrKeyTooLarge (Get and Delete
// called a long key ErrInvalidKey).
func TestKeySizeCheckedAlike(t *testing.T) {
	db, _ := tempStore(t, kvstore.Options{})
	ix := openIndex(t, db, "v", vector.Options{Dim: 2})
	for _, tc := range []struct {
		key  []byte
		want error
	}{
		{nil, kvstore.ErrInvalidKey},
		{[]byte{}, kvstore.ErrInvalidKey},
		{make([]byte, kvstore.MaxKeySize+1), kvstore.ErrKeyTooLarge},
	} {
		require.ErrorIs(t, ix.Put(ctx, tc.key, []float32{1, 0}, vector.Put{}), tc.want, "put %d bytes", len(tc.key))
		_, err := ix.Get(ctx, tc.key)
		require.ErrorIs(t, err, tc.want, "get %d bytes", len(tc.key))
		require.ErrorIs(t, ix.Delete(ctx, tc.key), tc.want, "delete %d bytes", len(tc.key))
	}
	key := make([]byte, kvstore.MaxKeySize)
	require.NoError(t, ix.Put(ctx, key, []float32{1, 0}, vector.Put{}))
	_, err := ix.Get(ctx, key)
	require.NoError(t, err)
	require.NoError(t, ix.Delete(ctx, key))
}

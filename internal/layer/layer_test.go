package layer_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/internal/testutil/tempstore"
	"github.com/snkv-go/snkv/kvstore"
)

// A nil store, transaction or context is ErrInvalidArgument from every
// hidden-table call, as from kvstore's own calls, never a panic.
func TestNilHandlesAreInvalidArguments(t *testing.T) {
	ctx := context.Background()
	db, _ := tempstore.Open(t, kvstore.Options{})
	_, err := layer.OpenHiddenTable(ctx, nil, "demo", "a")
	require.ErrorIs(t, err, kvstore.ErrInvalidArgument)
	_, err = layer.ListHiddenTables(ctx, nil, "demo")
	require.ErrorIs(t, err, kvstore.ErrInvalidArgument)
	require.ErrorIs(t, layer.SealHiddenTable(ctx, nil, "demo", "a"), kvstore.ErrInvalidArgument)
	_, err = layer.CreateHiddenTable(nil, "demo", "a")
	require.ErrorIs(t, err, kvstore.ErrInvalidArgument)
	require.ErrorIs(t, layer.DropHiddenTable(nil, "demo", "a"), kvstore.ErrInvalidArgument)
	var noCtx context.Context
	_, err = layer.OpenHiddenTable(noCtx, db, "demo", "a")
	require.ErrorIs(t, err, kvstore.ErrInvalidArgument)
}

// A handle made through the layer plumbing is an ordinary column family
// handle: it reads back what it wrote, and a missing table is ErrNotFound
// with a nil handle.
func TestHiddenTableRoundTrip(t *testing.T) {
	ctx := context.Background()
	db, _ := tempstore.Open(t, kvstore.Options{})
	var h *kvstore.ColumnFamily
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		var err error
		h, err = layer.CreateHiddenTable(tx, "demo", "a", layer.HiddenSealed)
		return err
	}))
	require.NoError(t, h.Put([]byte("k"), []byte("v")))
	again, err := layer.OpenHiddenTable(ctx, db, "demo", "a")
	require.NoError(t, err)
	v, err := again.Get([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, "v", string(v))
	missing, err := layer.OpenHiddenTable(ctx, db, "demo", "b")
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	require.Nil(t, missing)
	names, err := layer.ListHiddenTables(ctx, db, "demo")
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, names)
	require.Equal(t, "__snkv_demo:a", layer.HiddenTableName("demo", "a"))
}

package kvstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// A layer's checks and repairs run inside the store's own, on every store
// that has hidden tables of its kind.
func TestRegisteredLayerChecksAndRepairs(t *testing.T) {
	const kind = "layertest"
	layer.Register(kind, layer.Layer{
		Check: func(ctx context.Context, s *kvstore.Store) ([]string, error) {
			h, err := layer.OpenHiddenTable(ctx, s, kind, "t")
			if err != nil {
				return nil, err
			}
			if ok, err := h.Exists([]byte("bad")); err != nil || !ok {
				return nil, err
			}
			return []string{"layertest: t: a bad row"}, nil
		},
		Repair: func(ctx context.Context, s *kvstore.Store) ([]string, error) {
			h, err := layer.OpenHiddenTable(ctx, s, kind, "t")
			if err != nil {
				return nil, err
			}
			if err := h.Delete([]byte("bad")); errors.Is(err, kvstore.ErrNotFound) {
				return nil, nil
			} else if err != nil {
				return nil, err
			}
			return []string{"layertest: t: removed a bad row"}, nil
		},
	})
	ctx := context.Background()
	db, err := kvstore.Open("", kvstore.Options{})
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.IntegrityCheck(ctx), "a store without tables of the kind is not checked by the layer")
	var h *kvstore.ColumnFamily
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		h, err = layer.CreateHiddenTable(tx, kind, "t")
		return err
	}))
	require.NoError(t, db.IntegrityCheck(ctx))
	require.NoError(t, h.Put([]byte("bad"), nil))
	rep, err := db.CheckIntegrity(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"layertest: t: a bad row"}, rep.Problems)
	require.ErrorIs(t, db.IntegrityCheck(ctx), kvstore.ErrCorrupt)
	fixed, err := db.Repair(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"layertest: t: removed a bad row"}, fixed)
	require.NoError(t, db.IntegrityCheck(ctx))
	require.Panics(t, func() {
		layer.Register("kv", layer.Layer{Check: func(context.Context, *kvstore.Store) ([]string, error) { return nil, nil }})
	})
	require.Panics(t, func() { layer.Register("x", layer.Layer{}) })
}

func TestStoreClock(t *testing.T) {
	clk := kvstore.NewManualClock(time.Unix(1000, 0))
	db, err := kvstore.Open("", kvstore.Options{Clock: clk})
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, time.Unix(1000, 0), db.Clock().Now())
	clk.Advance(time.Second)
	require.Equal(t, time.Unix(1001, 0), db.Clock().Now())
	plain, err := kvstore.Open("", kvstore.Options{})
	require.NoError(t, err)
	defer plain.Close()
	require.WithinDuration(t, time.Now(), plain.Clock().Now(), time.Minute)
	var nilStore *kvstore.Store
	require.Nil(t, nilStore.Clock())
}

package kvstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
)

func TestHiddenTables(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/h.db"
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)

	// Created in a transaction that rolls back: nothing remains.
	tx, err := db.Begin(ctx, true)
	require.NoError(t, err)
	_, err = layer.CreateHiddenTable(tx, "demo", "a")
	require.NoError(t, err)
	require.NoError(t, tx.Rollback())
	_, err = layer.OpenHiddenTable(ctx, db, "demo", "a")
	require.ErrorIs(t, err, kvstore.ErrNotFound)

	var h *kvstore.ColumnFamily
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		var err error
		h, err = layer.CreateHiddenTable(tx, "demo", "a")
		if err != nil {
			return err
		}
		return tx.CF(h).Put([]byte("k"), []byte("v"))
	}))
	require.Equal(t, layer.HiddenTableName("demo", "a"), h.Name())
	v, err := h.Get([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, []byte("v"), v)

	require.ErrorIs(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		_, err := layer.CreateHiddenTable(tx, "demo", "a")
		return err
	}), kvstore.ErrExists, "second create")
	cfs, err := db.ListColumnFamilies()
	require.NoError(t, err)
	require.Equal(t, []string{"default"}, cfs)
	names, err := layer.ListHiddenTables(ctx, db, "demo")
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, names)
	names, err = layer.ListHiddenTables(ctx, db, "other")
	require.NoError(t, err)
	require.Empty(t, names)

	// Not reachable as a column family.
	_, err = db.OpenColumnFamily(layer.HiddenTableName("demo", "a"))
	require.ErrorIs(t, err, kvstore.ErrReservedName)

	// Bad kinds and names.
	for _, kind := range []string{"", "kv", "Bad", "a:b"} {
		_, err = layer.OpenHiddenTable(ctx, db, kind, "a")
		require.ErrorIs(t, err, kvstore.ErrInvalidName, kind)
	}
	_, err = layer.OpenHiddenTable(ctx, db, "demo", "")
	require.ErrorIs(t, err, kvstore.ErrInvalidName)

	// Reopen: still there, same kind.
	require.NoError(t, db.Close())
	db, err = kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	defer db.Close()
	h, err = layer.OpenHiddenTable(ctx, db, "demo", "a")
	require.NoError(t, err)
	_, err = h.Get([]byte("k"))
	require.NoError(t, err)
	require.NoError(t, db.IntegrityCheck(ctx))

	// Drop: the handle fails after commit, not before.
	tx, err = db.Begin(ctx, true)
	require.NoError(t, err)
	require.NoError(t, layer.DropHiddenTable(tx, "demo", "a"))
	require.NoError(t, tx.Rollback())
	_, err = h.Get([]byte("k"))
	require.NoError(t, err)
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error { return layer.DropHiddenTable(tx, "demo", "a") }))
	_, err = h.Get([]byte("k"))
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	require.ErrorIs(t, db.Update(ctx, func(tx *kvstore.Tx) error { return layer.DropHiddenTable(tx, "demo", "a") }), kvstore.ErrNotFound)
}

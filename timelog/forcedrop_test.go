package timelog_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

// A log with a damaged page cannot be dropped by Drop (it reads every page
// to announce the records); ForceDrop drops it without reading, and the
// name is free again.
func TestForceDropDamagedLog(t *testing.T) {
	src, _, rows := flipStore(t)
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "damaged.db")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	db, err := kvstore.Open(path, sealedOpts(kvstore.Options{}))
	require.NoError(t, err)
	defer db.Close()
	pages, err := layer.OpenHiddenTable(ctx, db, "timelog", "flip/pages")
	require.NoError(t, err)
	v := slices.Clone(rows[0].value)
	v[len(v)-1] ^= 0xFF
	require.NoError(t, pages.Put(rows[0].key, v))

	require.ErrorIs(t, timelog.Drop(ctx, db, "flip"), timelog.ErrCorrupt, "Drop reads the damaged page")

	l, err := timelog.Open(context.Background(), db, "flip", manual(timelog.Options{}))
	require.NoError(t, err)
	require.ErrorIs(t, timelog.ForceDrop(ctx, db, "flip"), timelog.ErrLocked, "not while open for writing")
	require.NoError(t, l.Close())

	require.NoError(t, timelog.ForceDrop(ctx, db, "flip"))
	logs, err := timelog.List(context.Background(), db)
	require.NoError(t, err)
	require.NotContains(t, logs, "flip")
	hidden, err := layer.ListHiddenTables(ctx, db, "timelog")
	require.NoError(t, err)
	for _, h := range hidden {
		require.NotContains(t, h, "flip/", "every table of the log is gone")
	}
	require.NoError(t, db.IntegrityCheck(ctx))
	require.ErrorIs(t, timelog.ForceDrop(ctx, db, "flip"), timelog.ErrNotFound)

	// The name can be used again, for an empty log.
	l, err = timelog.Open(context.Background(), db, "flip", manual(timelog.Options{}))
	require.NoError(t, err)
	n, err := l.Count()
	require.NoError(t, err)
	require.Zero(t, n)
	require.NoError(t, l.Close())
}

// ForceDrop also takes a log whose meta table is gone (Open fails on it)
// and the values table of a values log.
func TestForceDropPartialAndValuesLog(t *testing.T) {
	db, _ := openStore(t)
	l := oneValueLog(t, db, "one")
	require.NoError(t, l.Close())
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		return layer.DropHiddenTable(tx, "timelog", "v/meta")
	}))
	_, err := timelog.Open(context.Background(), db, "v", manual(timelog.Options{ReadOnly: true}))
	require.Error(t, err)

	require.NoError(t, timelog.ForceDrop(ctx, db, "v"))
	hidden, err := layer.ListHiddenTables(ctx, db, "timelog")
	require.NoError(t, err)
	require.Empty(t, hidden)
	require.ErrorIs(t, timelog.ForceDrop(ctx, db, ""), kvstore.ErrInvalidName)
}

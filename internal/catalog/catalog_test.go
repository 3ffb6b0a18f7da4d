package catalog_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/family"
	"github.com/stretchr/testify/require"
)

// Column families are listed without hidden tables, names compare without
// regard to ASCII case, the default one cannot be dropped, and a dropped
// family's state is retired.
func TestCreateOpenDropList(t *testing.T) {
	r, db := openRegistry(t, filepath.Join(t.TempDir(), "s.db"))
	ctx := context.Background()
	users, err := r.Create(ctx, "Users")
	require.NoError(t, err)
	_, err = r.Create(ctx, "users")
	require.ErrorIs(t, err, engine.ErrExists)
	got, err := r.Open(ctx, "USERS")
	require.NoError(t, err)
	require.Same(t, users, got, "one state per column family")
	require.Equal(t, "Users", got.Name)

	tx, err := db.Begin(ctx, true)
	require.NoError(t, err)
	h, err := r.CreateHidden(tx, "timelog", "cpu", true)
	require.NoError(t, err)
	require.True(t, h.Sealed.Load())
	require.NoError(t, tx.Commit())
	names, err := r.List(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"Users", family.DefaultName}, names)
	hidden, err := r.ListHidden(ctx, "timelog")
	require.NoError(t, err)
	require.Equal(t, []string{"cpu"}, hidden)
	opened, err := r.OpenHidden(ctx, "timelog", "cpu")
	require.NoError(t, err)
	require.True(t, opened.Sealed.Load(), "the mark is read back")

	require.ErrorIs(t, r.Drop(ctx, "default"), engine.ErrDropDefault)
	require.NoError(t, r.Drop(ctx, "users"))
	require.True(t, users.Dropped.Load())
	_, err = r.Open(ctx, "users")
	require.ErrorIs(t, err, engine.ErrNotFound)
}

// A column family created in a transaction that rolls back was never
// there.
func TestCreateInRollsBack(t *testing.T) {
	r, db := openRegistry(t, filepath.Join(t.TempDir(), "s.db"))
	ctx := context.Background()
	tx, err := db.Begin(ctx, true)
	require.NoError(t, err)
	_, err = r.CreateIn(tx, "tmp")
	require.NoError(t, err)
	require.NoError(t, tx.Rollback())
	_, err = r.Open(ctx, "tmp")
	require.ErrorIs(t, err, engine.ErrNotFound)
	ro, err := db.Begin(ctx, false)
	require.NoError(t, err)
	defer func() { _ = ro.Rollback() }()
	_, err = r.CreateIn(ro, "tmp")
	require.ErrorIs(t, err, engine.ErrReadOnlyTx)
}

package changelog

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/engine"
)

func epochOf(t *testing.T, db *engine.DB) []byte {
	t.Helper()
	var ep []byte
	require.NoError(t, db.WithReader(context.Background(), func(c *engine.Conn) error {
		var err error
		ep, err = Epoch(context.Background(), c)
		return err
	}))
	return ep
}

// A consumer's position is saved in the caller's transaction (a rollback
// keeps the old one), listed, bounds the trim, is refused after a reset of
// the history, and can be deleted.
func TestConsumers(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	setup(t, db)
	fill(t, db,
		Change{CF: "a", Op: OpPut, Key: []byte("1"), ExpiryMs: NoExpiry},
		Change{CF: "a", Op: OpPut, Key: []byte("2"), ExpiryMs: NoExpiry},
		Change{CF: "a", Op: OpPut, Key: []byte("3"), ExpiryMs: NoExpiry})
	ep := epochOf(t, db)

	require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
		_, err := LoadConsumer(ctx, c, "sync")
		require.ErrorIs(t, err, engine.ErrNotFound, "no table yet")
		list, err := ListConsumers(ctx, c)
		require.NoError(t, err)
		require.Empty(t, list)
		return nil
	}))

	tx := begin(t, db)
	require.NoError(t, EnsureConsumers(ctx, tx.Conn()))
	require.NoError(t, SaveConsumer(ctx, tx.Conn(), "sync", Position{Epoch: ep, Seq: 2}, 10))
	require.NoError(t, SaveConsumer(ctx, tx.Conn(), "audit", Position{Epoch: ep, Seq: 4}, 10))
	require.NoError(t, tx.Commit())

	tx = begin(t, db)
	require.NoError(t, SaveConsumer(ctx, tx.Conn(), "sync", Position{Epoch: ep, Seq: 4}, 20))
	require.NoError(t, tx.Rollback())

	require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
		got, err := LoadConsumer(ctx, c, "sync")
		require.NoError(t, err)
		require.Equal(t, Consumer{Name: "sync", Pos: Position{Epoch: ep, Seq: 2}, UpdatedMs: 10}, got, "the rollback kept the old position")
		list, err := ListConsumers(ctx, c)
		require.NoError(t, err)
		require.Equal(t, []string{"audit", "sync"}, []string{list[0].Name, list[1].Name})
		lim, err := TrimLimit(ctx, c, 100)
		require.NoError(t, err)
		require.Equal(t, int64(2), lim, "the trim stops at the slowest consumer")
		return nil
	}))

	tx = begin(t, db)
	err := SaveConsumer(ctx, tx.Conn(), "sync", Position{Epoch: make([]byte, EpochLen), Seq: 3}, 30)
	require.ErrorIs(t, err, ErrEpoch)
	require.ErrorIs(t, SaveConsumer(ctx, tx.Conn(), "", Position{Epoch: ep, Seq: 3}, 30), engine.ErrInvalidArgument)
	require.ErrorIs(t, SaveConsumer(ctx, tx.Conn(), "x", Position{Epoch: ep, Seq: 0}, 30), engine.ErrInvalidArgument)
	require.NoError(t, Reset(ctx, tx.Conn(), 30))
	require.ErrorIs(t, CheckEpoch(ctx, tx.Conn(), Position{Epoch: ep, Seq: 2}), ErrEpoch, "a position of the old history")
	lim, err := TrimLimit(ctx, tx.Conn(), 100)
	require.NoError(t, err)
	require.Equal(t, int64(100), lim, "consumers of an old epoch hold nothing back")
	ok, err := DeleteConsumer(ctx, tx.Conn(), "sync")
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = DeleteConsumer(ctx, tx.Conn(), "sync")
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, tx.Commit())
}

// A position read in a read transaction is not moved by a commit during
// it, and reading from it gives exactly the changes committed after.
func TestSnapshotPosition(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() *engine.DB { return openDB(t, filepath.Join(dir, "s.db")) }
	db, other := open(), open()
	setup(t, db)
	fill(t, db, Change{CF: "a", Op: OpPut, Key: []byte("1"), ExpiryMs: NoExpiry})

	rtx, err := db.Begin(ctx, false)
	require.NoError(t, err)
	p, err := SnapshotPosition(ctx, rtx.Conn())
	require.NoError(t, err)
	fill(t, other, Change{CF: "a", Op: OpPut, Key: []byte("2"), ExpiryMs: NoExpiry})
	again, err := SnapshotPosition(ctx, rtx.Conn())
	require.NoError(t, err)
	require.NoError(t, rtx.Commit())
	require.Equal(t, p, again, "the snapshot does not see the later commit")
	require.Equal(t, int64(2), p.Seq)
	require.Equal(t, epochOf(t, db), p.Epoch)

	require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
		got, _, err := ReadFiltered(ctx, c, p.Seq, Filter{}, 10)
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, []byte("2"), got[0].Key)
		return nil
	}))
}

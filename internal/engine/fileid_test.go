package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The checkpointer opens its connection at its first pass, by path. Once
// the store's file has been replaced by another, that connection would
// copy the store's WAL (its -wal file is still at the path) into the other
// file: the pass must refuse, count an error, and leave the other file as
// it was; the store keeps its data.
func TestCheckpointerRefusesReplacedFile(t *testing.T) {
	ctx := context.Background()
	db, path := ckptDB(t, 1<<30) // no pass on its own
	putRows(t, db, 0, 200, 100)
	k := db.ckpt
	k.mu.Lock()
	if k.conn != nil { // opened at start: drop it, as after a restart of the pass
		k.shm.Store(nil)
		k.connMu.Lock()
		_ = k.conn.close()
		k.conn = nil
		k.connMu.Unlock()
	}
	k.mu.Unlock()

	other := filepath.Join(t.TempDir(), "other.db")
	o := testDB(t, other)
	withWriter(t, o, func(c *Conn) {
		require.NoError(t, c.ExecScript(ctx, "CREATE TABLE u (k INTEGER PRIMARY KEY)"))
	})
	require.NoError(t, o.Close())
	before, err := os.ReadFile(other)
	require.NoError(t, err)
	require.NoError(t, os.Rename(other, path))

	errs := k.stats.Errors.Load()
	k.pass()
	require.Greater(t, k.stats.Errors.Load(), errs, "the pass opened the file now at the path")
	k.connMu.Lock()
	require.Nil(t, k.conn)
	k.connMu.Unlock()
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after, "the pass wrote into the other file")

	_, err = db.openCheckpointConn()
	require.ErrorIs(t, err, ErrCantOpen)

	// The store's own writer still has its file and its rows.
	withWriter(t, db, func(c *Conn) {
		n, err := c.QueryInt(ctx, "SELECT count(*) FROM t")
		require.NoError(t, err)
		require.EqualValues(t, 200, n)
	})
}

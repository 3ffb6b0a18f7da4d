package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A reader keeps its mapping of the database file across the writer's
// commits while the file's size stays, and reads through it what the file
// holds now: rows changed in the WAL, then copied into the file by a
// checkpoint; a file that grows or shrinks (VACUUM) is mapped again and
// read whole.
func TestDatabaseMappingKeptAcrossCommits(t *testing.T) {
	if !walMapSupported {
		t.Skip("database files keep the default methods here")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := Open(Config{Path: path, Journal: "WAL", Sync: "NORMAL", BusyTimeout: 5 * time.Second,
		MmapSize: 64 << 20, MaxReaders: 1, AutoCheckpoint: -1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	withWriter(t, db, func(c *Conn) {
		require.NoError(t, db.SetJournalMode(ctx, c))
		require.NoError(t, c.ExecScript(ctx, "CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)"))
	})
	checkpoint := func() {
		withWriter(t, db, func(c *Conn) {
			rows, err := c.Query(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
			require.NoError(t, err)
			require.True(t, rows.Next())
			require.Zero(t, rows.Int(0), "the checkpoint was busy")
			require.NoError(t, rows.Close())
		})
	}
	set := func(k, v int) {
		withWriter(t, db, func(c *Conn) {
			_, err := c.Exec(ctx, "UPDATE t SET v = zeroblob(?2) WHERE k = ?1", k, v)
			require.NoError(t, err)
		})
	}
	// read returns, through a read connection, the number of rows and the
	// sum of their values' lengths.
	read := func() (n, sum int64) {
		c, err := db.AcquireSnapshot(ctx, ReadMulti)
		require.NoError(t, err)
		defer db.ReleaseSnapshot(c)
		n, err = c.QueryInt(ctx, "SELECT count(*) FROM t")
		require.NoError(t, err)
		sum, err = c.QueryInt(ctx, "SELECT coalesce(sum(length(v)), 0) FROM t")
		require.NoError(t, err)
		return n, sum
	}

	putRows(t, db, 0, 2000, 100)
	checkpoint()
	n, sum := read()
	require.Equal(t, int64(2000), n)
	require.Equal(t, int64(2000*100), sum)

	kept := dbKept.Load()
	set(7, 10) // in the WAL; the file's size stays
	_, sum = read()
	require.Equal(t, int64(1999*100+10), sum)
	require.Greater(t, dbKept.Load(), kept, "the reader unmapped a file whose size had not changed")

	checkpoint() // the change now in the file, under the kept mapping
	set(8, 20)
	checkpoint()
	_, sum = read()
	require.Equal(t, int64(1998*100+10+20), sum)

	putRows(t, db, 2000, 3000, 100) // the file grows
	checkpoint()
	n, sum = read()
	require.Equal(t, int64(5000), n)
	require.Equal(t, int64(4998*100+10+20), sum)

	withWriter(t, db, func(c *Conn) { // and shrinks
		_, err := c.Exec(ctx, "DELETE FROM t WHERE k >= 100")
		require.NoError(t, err)
		require.NoError(t, c.ExecScript(ctx, "VACUUM"))
	})
	checkpoint()
	n, sum = read()
	require.Equal(t, int64(100), n)
	require.Equal(t, int64(98*100+10+20), sum)
}

package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func holdDB(t *testing.T, hold time.Duration) *DB {
	t.Helper()
	db, err := Open(Config{Path: filepath.Join(t.TempDir(), "h.db"), Journal: "WAL", Sync: "NORMAL",
		BusyTimeout: time.Second, MmapSize: 1 << 20, ReadHold: hold, MaxReaders: 2})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	withWriter(t, db, func(c *Conn) {
		require.NoError(t, db.SetJournalMode(context.Background(), c))
		require.NoError(t, c.ExecScript(context.Background(), "CREATE TABLE t (k PRIMARY KEY, v)"))
	})
	return db
}

// readV reads t's row k through AcquireSnapshot/ReleaseSnapshot.
func readV(t *testing.T, db *DB, k int64) (v int64, found bool) {
	t.Helper()
	c, err := db.AcquireSnapshot(context.Background(), ReadPoint)
	require.NoError(t, err)
	defer db.ReleaseSnapshot(c)
	rows, err := c.Query(context.Background(), "SELECT v FROM t WHERE k = ?1", k)
	require.NoError(t, err)
	if rows.Next() {
		v, found = rows.Int(0), true
	}
	require.NoError(t, rows.Close())
	return v, found
}

// A held read transaction is reused until the writer commits, and a
// commit is seen by the next read.
func TestHeldReadReusedUntilCommit(t *testing.T) {
	db := holdDB(t, time.Hour)
	_, found := readV(t, db, 1)
	require.False(t, found)
	require.True(t, db.HeldShm(), "the WAL index was not mapped")
	for i := range int64(5) {
		before := db.Stats.HeldReads.Load()
		readV(t, db, 1)
		require.Equal(t, before+1, db.Stats.HeldReads.Load(), "an unchanged store did not reuse the held transaction")
		withWriter(t, db, func(c *Conn) {
			_, err := c.Exec(context.Background(), "INSERT OR REPLACE INTO t (k, v) VALUES (1, ?1)", i)
			require.NoError(t, err)
		})
		v, found := readV(t, db, 1)
		require.True(t, found)
		require.Equal(t, i, v)
		require.Equal(t, before+1, db.Stats.HeldReads.Load(), "a read after a commit reused the old transaction")
	}
}

// The sweep ends a held transaction once it has been idle for ReadHold;
// DropHeld ends it at once.
func TestSweepEndsIdleHeldRead(t *testing.T) {
	db := holdDB(t, time.Millisecond)
	readV(t, db, 1)
	// The probe takes the reader out of the pool; a sweep that runs
	// meanwhile does not see it, so the probe arms the next sweep, as
	// ReleaseSnapshot does for a reader it gives back still holding its
	// transaction (without that, a sweep that met the probe was the last).
	held := func() bool {
		c, err := db.takeReader(context.Background())
		require.NoError(t, err)
		open := c.hold.open
		db.ReleaseReader(c)
		if open {
			db.armSweep()
		}
		return open
	}
	require.Eventually(t, func() bool { return !held() }, 10*time.Second, 5*time.Millisecond)

	db = holdDB(t, time.Hour)
	readV(t, db, 1)
	require.True(t, held())
	db.DropHeld()
	require.False(t, held())
}

// AcquireReader never hands out a reader inside a held transaction.
func TestAcquireReaderEndsHeldRead(t *testing.T) {
	db := holdDB(t, time.Hour)
	readV(t, db, 1)
	c, err := db.AcquireReader(context.Background())
	require.NoError(t, err)
	defer db.ReleaseReader(c)
	require.False(t, c.inTx())
	require.NoError(t, c.Control(context.Background(), "BEGIN"))
	require.NoError(t, c.Control(context.Background(), "COMMIT"))
}

package engine

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// copyStore copies the database file at path and its WAL into dir, as a
// process killed now would leave them, and returns the copy's path.
func copyStore(t *testing.T, path, dir string) string {
	t.Helper()
	to := filepath.Join(dir, filepath.Base(path))
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(to+suffix, b, 0o600))
	}
	return to
}

// A store's WAL frames are each written in one write, and the WAL on disk
// after every commit is what SQLite's own two writes leave: a copy of the
// files taken while the store is open (nothing checkpointed) recovers
// every commit, through the checksums of every frame, the frames of a
// transaction that spilled its cache and wrote some pages again (whose
// checksums SQLite rewrites at the commit) included.
//
// With the WAL mapped, frames are written in batches of up to walBatch
// bytes and the rewritten checksums with their pages (from the mapping):
// a copy taken after each commit still recovers it.
func TestWALVFSOneWriteAFrame(t *testing.T) {
	t.Run("unmapped", func(t *testing.T) { testWALVFSWrites(t, 0) })
	t.Run("mapped", func(t *testing.T) {
		if !walMapSupported {
			t.Skip("WAL files are not mapped on this platform")
		}
		testWALVFSWrites(t, 1<<20)
	})
}

func testWALVFSWrites(t *testing.T, mmap int64) {
	require.NotEmpty(t, walVFS(), "the VFS registers")
	dir := t.TempDir()
	path := filepath.Join(dir, "w.db")
	db, err := Open(Config{Path: path, Journal: "WAL", Sync: "NORMAL", BusyTimeout: 5 * time.Second,
		CacheKiB: 64, AutoCheckpoint: -1, MaxReaders: 2, MmapSize: mmap})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	ctx := context.Background()
	withWriter(t, db, func(c *Conn) {
		require.NoError(t, db.SetJournalMode(ctx, c))
		require.NoError(t, c.ExecScript(ctx, "CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)"))
	})
	merged, rewrites := walWrites.merged.Load(), walWrites.rewrites.Load()
	batches, held := walWrites.batches.Load(), walWrites.heldRewrites.Load()

	// One transaction far larger than the 16-page cache, writing its
	// first pages again after they were spilled, then a small one.
	rng := rand.New(rand.NewPCG(7, 7))
	want := map[int64]int64{}
	tx, err := db.Begin(ctx, true)
	require.NoError(t, err)
	put := func(k int64, n int) {
		v := make([]byte, n)
		for i := range v {
			v[i] = byte(rng.Uint32())
		}
		_, err := tx.Conn().Exec(ctx, "INSERT OR REPLACE INTO t (k, v) VALUES (?1, ?2)", k, v)
		require.NoError(t, err)
		want[k] = int64(n)
	}
	for k := range int64(3000) {
		put(k, 300)
	}
	for range 500 {
		put(rng.Int64N(300), 200)
	}
	require.NoError(t, tx.Commit())
	require.Greater(t, walWrites.merged.Load()-merged, uint64(200), "frames written in one write each (the table has 230 pages)")
	require.Greater(t, walWrites.rewrites.Load()-rewrites, uint64(0), "the commit rewrote checksums of frames it overwrote")
	if mmap > 0 {
		require.Greater(t, walWrites.batches.Load()-batches, uint64(10), "frames written in batches")
		require.Greater(t, walWrites.heldRewrites.Load()-held, uint64(0), "rewritten checksums written in batches")
	} else {
		require.Equal(t, held, walWrites.heldRewrites.Load(), "without the mapping, a rewritten header is written alone")
	}
	recovered(t, copyStore(t, path, t.TempDir()), want)

	tx, err = db.Begin(ctx, true)
	require.NoError(t, err)
	put(5000, 10)
	require.NoError(t, tx.Commit())
	recovered(t, copyStore(t, path, t.TempDir()), want)
}

// recovered checks that the store at path (a copy with its WAL) passes
// SQLite's integrity check and holds the rows of want (key → value
// length) in table t.
func recovered(t *testing.T, path string, want map[int64]int64) {
	t.Helper()
	ctx := context.Background()
	dsn, err := fileURI(path)
	require.NoError(t, err)
	c, err := openConn(dsn) // the default VFS
	require.NoError(t, err)
	defer func() { require.NoError(t, c.close()) }()
	rows, err := c.Query(ctx, "PRAGMA integrity_check")
	require.NoError(t, err)
	require.True(t, rows.Next())
	check := string(rows.Bytes(0))
	require.NoError(t, rows.Close())
	require.Equal(t, "ok", check)
	n, err := c.QueryInt(ctx, "SELECT count(*) FROM t")
	require.NoError(t, err)
	require.Equal(t, int64(len(want)), n, "every committed row recovered from the WAL")
	var total int64
	for _, l := range want {
		total += l
	}
	sum, err := c.QueryInt(ctx, "SELECT sum(length(v)) FROM t")
	require.NoError(t, err)
	require.Equal(t, total, sum)
}

// A store with memory-mapped reads maps its WAL files too: the writer
// reads back the pages a large transaction spilled, and readers the
// pages of the WAL, from the mapping, without a system call each; pages
// past the mapping are read from the file. The reads stay right after a
// checkpoint truncates the WAL under a reader's mapping and commits grow
// it again.
func TestWALVFSMappedReads(t *testing.T) {
	require.NotEmpty(t, walVFS(), "the VFS registers")
	if !walMapSupported {
		t.Skip("WAL files are not mapped on this platform")
	}
	path := filepath.Join(t.TempDir(), "m.db")
	const mapped = 512 << 10 // less than the WAL below: its tail is read from the file
	db, err := Open(Config{Path: path, Journal: "WAL", Sync: "NORMAL", BusyTimeout: 5 * time.Second,
		CacheKiB: 64, AutoCheckpoint: -1, MaxReaders: 2, MmapSize: mapped})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	ctx := context.Background()
	withWriter(t, db, func(c *Conn) {
		require.NoError(t, db.SetJournalMode(ctx, c))
		require.NoError(t, c.ExecScript(ctx, "CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)"))
	})
	rng := rand.New(rand.NewPCG(3, 3))
	want := map[int64]int64{}
	write := func(rows int, span int64) {
		tx, err := db.Begin(ctx, true)
		require.NoError(t, err)
		for range rows {
			k, n := rng.Int64N(span), 100+rng.IntN(300)
			_, err := tx.Conn().Exec(ctx, "INSERT OR REPLACE INTO t (k, v) VALUES (?1, zeroblob(?2))", k, n)
			require.NoError(t, err)
			want[k] = int64(n)
		}
		require.NoError(t, tx.Commit())
	}
	check := func() {
		c, err := db.AcquireSnapshot(ctx, ReadMulti)
		require.NoError(t, err)
		defer db.ReleaseSnapshot(c)
		n, err := c.QueryInt(ctx, "SELECT count(*) FROM t")
		require.NoError(t, err)
		require.Equal(t, int64(len(want)), n)
		var total int64
		for _, l := range want {
			total += l
		}
		sum, err := c.QueryInt(ctx, "SELECT sum(length(v)) FROM t")
		require.NoError(t, err)
		require.Equal(t, total, sum)
		rows, err := c.Query(ctx, "PRAGMA integrity_check")
		require.NoError(t, err)
		require.True(t, rows.Next())
		require.Equal(t, "ok", string(rows.Bytes(0)))
		require.NoError(t, rows.Close())
	}

	before := walWrites.mapped.Load()
	write(6000, 4000) // about 300 pages, 20 times the 16-page cache: spilled and read back
	require.Greater(t, walWrites.mapped.Load(), before, "the writer read spilled pages from the mapping")
	before = walWrites.mapped.Load()
	check()
	require.Greater(t, walWrites.mapped.Load(), before, "the reader read WAL pages from the mapping")

	// Truncate the WAL under the reader's mapping, then grow it again.
	db.DropHeld()
	withWriter(t, db, func(c *Conn) {
		require.NoError(t, c.ExecScript(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"))
	})
	st, err := os.Stat(path + "-wal")
	require.NoError(t, err)
	require.Zero(t, st.Size(), "the checkpoint truncated the WAL")
	write(3000, 4000)
	check()
	write(200, 100)
	check()
}

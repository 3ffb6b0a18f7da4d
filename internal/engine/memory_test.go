package engine

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/stretchr/testify/require"
)

func memoryDB(t *testing.T) *DB {
	t.Helper()
	db, err := Open(Config{Journal: "DELETE", Sync: "FULL", BusyTimeout: time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// An in-memory store is a WAL store in a private directory under
// memoryRoot, whatever journal and sync the configuration names, with a
// checkpointer like a file store's; Close removes the directory.
func TestMemoryStoreIsAPrivateWALFile(t *testing.T) {
	ctx := context.Background()
	db := memoryDB(t)
	require.True(t, db.Memory())
	require.Equal(t, memoryRoot(), filepath.Dir(db.memDir))
	st, err := os.Stat(db.memDir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	require.NotNil(t, db.ckpt)
	withWriter(t, db, func(c *Conn) {
		require.NoError(t, db.SetJournalMode(ctx, c))
		mode, err := c.QueryText(ctx, "PRAGMA journal_mode")
		require.NoError(t, err)
		require.Equal(t, "wal", mode)
		sync, err := c.QueryInt(ctx, "PRAGMA synchronous")
		require.NoError(t, err)
		require.Zero(t, sync, "synchronous=OFF")
		require.NoError(t, c.ExecScript(ctx, "CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)"))
	})
	putRows(t, db, 0, 100, 100)
	require.FileExists(t, db.cfg.Path+"-wal")
	if memoryVFS() != "" {
		require.NoFileExists(t, db.cfg.Path+"-shm", "the WAL index is in heap memory")
	}
	require.NoError(t, db.Close())
	require.NoDirExists(t, db.memDir)
}

// A reader still held (by a cursor) when the store closes keeps the files
// until it is released; then they go.
func TestMemoryStoreRemovedByLastReader(t *testing.T) {
	db := memoryDB(t)
	r, err := db.AcquireReader(context.Background())
	require.NoError(t, err)
	require.NoError(t, db.Close())
	require.DirExists(t, db.memDir)
	db.ReleaseReader(r)
	require.NoDirExists(t, db.memDir)
}

// The first in-memory open of a process removes the directories that
// in-memory stores of dead processes left behind, and nothing else: not a
// live process's, not a young one, not one whose store file a connection
// holds, not another program's.
func TestSweepMemoryDirs(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("process ids are not asked on Windows: nothing is swept")
	}
	root := t.TempDir()
	dead := testutil.NoTestCommand(context.Background(), t)
	require.NoError(t, dead.Run())
	deadPid := strconv.Itoa(dead.Process.Pid)
	now := time.Now()
	old := now.Add(-2 * memoryStaleAge)
	mk := func(name string, mtime time.Time, withStore bool) string {
		dir := filepath.Join(root, name)
		require.NoError(t, os.Mkdir(dir, 0o700))
		if withStore {
			c, err := openConn("file:" + filepath.ToSlash(filepath.Join(dir, memoryFile)))
			require.NoError(t, err)
			require.NoError(t, c.ExecScript(context.Background(), "PRAGMA journal_mode = WAL; CREATE TABLE t (x)"))
			require.NoError(t, c.close())
		}
		require.NoError(t, os.Chtimes(dir, mtime, mtime))
		return dir
	}
	abandoned := mk(memoryPrefix+deadPid+"-1", old, true)
	empty := mk(memoryPrefix+deadPid+"-2", old, false)
	live := mk(memoryPrefix+strconv.Itoa(os.Getppid())+"-3", old, true)
	young := mk(memoryPrefix+deadPid+"-4", now, true)
	other := mk("another-program-"+deadPid, old, false)
	held := mk(memoryPrefix+deadPid+"-5", old, true)
	c, err := openConn("file:" + filepath.ToSlash(filepath.Join(held, memoryFile)))
	require.NoError(t, err)
	defer c.close()
	_, err = c.QueryInt(context.Background(), "SELECT count(*) FROM t")
	require.NoError(t, err)
	require.NoError(t, os.Chtimes(held, old, old))

	sweepMemoryDirs(root, now)
	require.NoDirExists(t, abandoned)
	require.NoDirExists(t, empty)
	for _, dir := range []string{live, young, other, held} {
		require.DirExists(t, dir)
	}
}

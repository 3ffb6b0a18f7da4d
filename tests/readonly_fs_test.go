//go:build linux

package tests

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// readOnlyView bind-mounts dir read-only at a new directory and returns
// it; the test is skipped where mounting is not allowed (it needs root, or
// CAP_SYS_ADMIN: file permission bits do not stop root, a read-only mount
// does).
func readOnlyView(t *testing.T, dir string) string {
	t.Helper()
	view := t.TempDir()
	if err := syscall.Mount(dir, view, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind-mount (%v): the read-only file system test needs CAP_SYS_ADMIN", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(view, syscall.MNT_DETACH) })
	if err := syscall.Mount("", view, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only (%v)", err)
	}
	probe := filepath.Join(view, "probe")
	if f, err := os.Create(probe); err == nil {
		f.Close()
		_ = os.Remove(probe)
		t.Skip("the read-only mount accepts writes")
	}
	return view
}

// A store closed cleanly opens with ReadOnly on a read-only file system
// (where SQLite cannot create the -shm a WAL reader needs): every read
// works, every write fails with ErrReadOnly, and nothing is written.
func TestReadOnlyFileSystem(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "store.db")
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	require.NoError(t, db.Put([]byte("k"), []byte("v")))
	cf, err := db.CreateColumnFamily("other")
	require.NoError(t, err)
	require.NoError(t, cf.PutTTL([]byte("t"), []byte("ttl"), 1<<50))
	require.NoError(t, db.Close())
	before := testutil.ListDir(t, dir)

	view := readOnlyView(t, dir)
	rpath := filepath.Join(view, "store.db")
	ro, err := kvstore.Open(rpath, kvstore.Options{ReadOnly: true})
	require.NoError(t, err)
	v, err := ro.Get([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, "v", string(v))
	rcf, err := ro.OpenColumnFamily("other")
	require.NoError(t, err)
	_, d, err := rcf.GetTTL([]byte("t"))
	require.NoError(t, err)
	require.Positive(t, d)
	n := 0
	for _, err := range ro.All() {
		require.NoError(t, err)
		n++
	}
	require.Equal(t, 1, n)
	require.NoError(t, ro.View(context.Background(), func(tx *kvstore.Tx) error {
		_, err := tx.Get([]byte("k"))
		return err
	}))
	require.ErrorIs(t, ro.Put([]byte("k2"), []byte("v")), kvstore.ErrReadOnly)
	require.NoError(t, ro.IntegrityCheck(context.Background()))
	require.NoError(t, ro.Close())

	// A read-write open there fails cleanly.
	_, err = kvstore.Open(rpath, kvstore.Options{})
	require.Error(t, err)
	require.Equal(t, before, testutil.ListDir(t, dir), "nothing written beside the store")
}

// A store whose -wal still holds commits (a crash, or a copy taken while
// it was open) cannot be read on a read-only file system without its
// -shm: the open fails rather than read the file without those commits.
func TestReadOnlyFileSystemWithPendingWAL(t *testing.T) {
	src := filepath.Join(t.TempDir(), "store.db")
	db, err := kvstore.Open(src, kvstore.Options{WALAutoCheckpoint: -1})
	require.NoError(t, err)
	require.NoError(t, db.Put([]byte("k"), []byte("v")))
	dir := t.TempDir()
	for _, s := range []string{"", "-wal"} {
		data, err := os.ReadFile(src + s)
		require.NoError(t, err)
		require.NotEmpty(t, data, s)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "store.db"+s), data, 0o644))
	}
	require.NoError(t, db.Close())
	view := readOnlyView(t, dir)
	ro, err := kvstore.Open(filepath.Join(view, "store.db"), kvstore.Options{ReadOnly: true})
	if err == nil {
		// If SQLite manages it, it must read the commits in the -wal.
		v, gerr := ro.Get([]byte("k"))
		require.NoError(t, gerr)
		require.Equal(t, "v", string(v))
		require.NoError(t, ro.Close())
		return
	}
	require.ErrorIs(t, err, kvstore.ErrCantOpen)
}

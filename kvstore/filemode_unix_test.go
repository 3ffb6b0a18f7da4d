//go:build unix

package kvstore_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// withUmask runs fn with the process's umask set to mask (the umask is
// process-wide: no test of this package runs in parallel).
func withUmask(mask int, fn func()) {
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	fn()
}

// requireNoWider fails if a file in dir has a permission bit outside want.
func requireNoWider(t *testing.T, dir string, want os.FileMode) int {
	t.Helper()
	n := 0
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		st, err := os.Lstat(p)
		if err != nil {
			return nil // gone meanwhile (a journal)
		}
		n++
		require.Zero(t, st.Mode().Perm()&^want, "%s is %v, wider than %v", p, st.Mode().Perm(), want)
		return nil
	}))
	return n
}

// Options.FileMode is the mode of every file snkv creates for a store:
// with umask 0 no file (store, -wal, -shm, rollback journal, backup) ends up
// with a permission bit outside it, and the default is 0600.
func TestFileModeUmaskZero(t *testing.T) {
	for _, c := range []struct {
		name string
		mode os.FileMode
		want os.FileMode
		j    kvstore.JournalMode
	}{
		{"default", 0, kvstore.DefaultFileMode, kvstore.JournalWAL},
		{"0600", 0o600, 0o600, kvstore.JournalWAL},
		{"0640", 0o640, 0o640, kvstore.JournalWAL},
		{"0660 delete journal", 0o660, 0o660, kvstore.JournalDelete},
	} {
		t.Run(c.name, func(t *testing.T) {
			withUmask(0, func() {
				ctx := context.Background()
				dir := t.TempDir()
				path := filepath.Join(dir, "store.db")
				db := openAt(t, path, kvstore.Options{FileMode: c.mode, Journal: c.j})
				st, err := os.Stat(path)
				require.NoError(t, err)
				require.Equal(t, c.want, st.Mode().Perm(), "the store file")
				require.NoError(t, db.PutTTL(b("k"), b("v"), time.Hour))
				seen := map[string]bool{}
				require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
					for i := range 200 {
						if err := tx.Default().Put([]byte{byte(i)}, make([]byte, 1000)); err != nil {
							return err
						}
					}
					// Inside the write transaction every companion exists.
					for _, s := range []string{"-wal", "-shm", "-journal"} {
						if st, err := os.Stat(path + s); err == nil {
							seen[s] = true
							require.Equal(t, c.want, st.Mode().Perm(), s)
						}
					}
					return nil
				}))
				if c.j == kvstore.JournalWAL {
					require.True(t, seen["-wal"] && seen["-shm"], "%v", seen)
				} else {
					require.True(t, seen["-journal"], "%v", seen)
				}
				require.NoError(t, db.Backup(ctx, filepath.Join(dir, "backup.db")))
				st, err = os.Stat(filepath.Join(dir, "backup.db"))
				require.NoError(t, err)
				require.Equal(t, c.want, st.Mode().Perm(), "the backup")
				require.GreaterOrEqual(t, requireNoWider(t, dir, c.want), 2, "store and backup at least")
				require.NoError(t, db.Close())
				requireNoWider(t, dir, c.want)
			})
		})
	}
}

// The umask still narrows the mode, as for any file a program creates.
func TestFileModeUmaskNarrows(t *testing.T) {
	withUmask(0o027, func() {
		path := tempPath(t)
		db := openAt(t, path, kvstore.Options{FileMode: 0o666})
		require.NoError(t, db.Put(b("k"), b("v")))
		st, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o640), st.Mode().Perm())
		requireNoWider(t, filepath.Dir(path), 0o640)
	})
}

// An existing store keeps its mode: FileMode applies to files snkv creates.
func TestFileModeExistingFileKept(t *testing.T) {
	path := tempPath(t)
	db := openAt(t, path, kvstore.Options{FileMode: 0o640})
	require.NoError(t, db.Close())
	require.NoError(t, os.Chmod(path, 0o644))
	db = openAt(t, path, kvstore.Options{FileMode: 0o600})
	require.NoError(t, db.Put(b("k"), b("v")))
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), st.Mode().Perm())
}

// FileMode must be permission bits that let the owner read and write.
func TestFileModeInvalid(t *testing.T) {
	for _, m := range []os.FileMode{0o400, 0o200, 0o1600, os.ModeDir | 0o600, 0o7777} {
		_, err := kvstore.Open(tempPath(t), kvstore.Options{FileMode: m})
		require.ErrorIs(t, err, kvstore.ErrInvalidOption, "%v", m)
	}
}

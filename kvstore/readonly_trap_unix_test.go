//go:build unix

package kvstore_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// childDirEnv names the directory the unprivileged child works in.
const childDirEnv = "SNKV_TEST_CHILD_DIR"

// asUnprivileged runs body(dir) as a user who is not root (file modes do
// not stop root): in this process when it is not root, else in a copy of
// the test binary started as nobody (uid and gid 65534). The test is
// skipped, saying why, when the process may not switch user.
func asUnprivileged(t *testing.T, body func(t *testing.T, dir string)) {
	t.Helper()
	if testutil.IsChild(t) {
		body(t, os.Getenv(childDirEnv))
		return
	}
	dir := t.TempDir()
	if os.Geteuid() != 0 {
		body(t, dir)
		return
	}
	// A directory nobody owns, and a copy of this binary nobody may run,
	// under a path nobody may walk.
	base, err := os.MkdirTemp("", "snkv-nobody-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	dir = filepath.Join(base, "store")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.Chown(dir, 65534, 65534))
	bin := filepath.Join(base, "test.bin")
	src, err := os.Open(os.Args[0])
	require.NoError(t, err)
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, errors.Join(err, src.Close(), dst.Close()))

	cmd := testutil.ChildCommand(context.Background(), t, t.Name(), childDirEnv+"="+dir)
	cmd.Path, cmd.Args[0] = bin, bin
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(err.Error(), "operation not permitted") {
		t.Skipf("cannot start a process as nobody (%v): this test needs a user other than root", err)
	}
	require.NoError(t, err, "the unprivileged run failed:\n%s", out)
	require.Contains(t, string(out), "--- PASS: "+t.Name(), "%s", out)
	require.NotContains(t, string(out), "--- SKIP: "+t.Name(), "%s", out)
}

// A read-only open of a store whose file the user may not write (mode
// 0444) must not leave -wal or -shm files that make the next writer fail
// once the file is writable again; and a writer that finds such files left
// by an older version or another tool names them and says what to do.
func TestReadOnlyOpenLeavesNoTrap(t *testing.T) {
	asUnprivileged(t, func(t *testing.T, dir string) {
		require.NotZero(t, os.Geteuid(), "must run as a user file modes apply to")
		path := filepath.Join(dir, "ro.db")
		db, err := kvstore.Open(path, kvstore.Options{})
		require.NoError(t, err)
		require.NoError(t, db.Put(b("k"), b("v")))
		require.NoError(t, db.Close())

		require.NoError(t, os.Chmod(path, 0o444))
		ro, err := kvstore.Open(path, kvstore.Options{ReadOnly: true})
		require.NoError(t, err)
		v, err := ro.Get(b("k"))
		require.NoError(t, err)
		require.Equal(t, b("v"), v)
		require.NoError(t, ro.Close())
		for _, s := range []string{"-wal", "-shm"} {
			if st, err := os.Stat(path + s); err == nil {
				require.NotZero(t, st.Mode().Perm()&0o200, "%s left by the read-only open is %v: the owner's next writer could not use it", s, st.Mode().Perm())
			}
		}

		require.NoError(t, os.Chmod(path, 0o644))
		db, err = kvstore.Open(path, kvstore.Options{})
		require.NoError(t, err)
		require.NoError(t, db.Put(b("k2"), b("v2")), "the writer after a read-only open")
		require.NoError(t, db.Close())

		// Files such a read-only open made before: the writer refuses to
		// start, naming the file and what to do, instead of failing every
		// write with "attempt to write a readonly database".
		for _, s := range []string{"-shm", "-wal"} {
			require.NoError(t, os.WriteFile(path+s, nil, 0o444))
			_, err = kvstore.Open(path, kvstore.Options{})
			require.ErrorIs(t, err, kvstore.ErrReadOnly, s)
			require.Contains(t, err.Error(), path+s)
			require.Contains(t, err.Error(), "remove it")
			require.NoError(t, os.Remove(path+s))
		}
		// A -wal with frames holds commits: never advised to be removed.
		require.NoError(t, os.WriteFile(path+"-wal", make([]byte, 4096), 0o444))
		_, err = kvstore.Open(path, kvstore.Options{})
		require.ErrorIs(t, err, kvstore.ErrReadOnly)
		require.Contains(t, err.Error(), "do not remove it")
		require.NoError(t, os.Remove(path+"-wal"))
		db, err = kvstore.Open(path, kvstore.Options{})
		require.NoError(t, err)
		v, err = db.Get(b("k2"))
		require.NoError(t, err)
		require.Equal(t, b("v2"), v)
		require.NoError(t, db.Close())
	})
}

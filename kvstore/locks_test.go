//go:build linux || darwin || freebsd || netbsd || openbsd

package kvstore_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// probeLocksEnv lists what a child of the lock tests probes, as
// "name=path@offset+length" entries separated by ";".
const probeLocksEnv = "SNKV_TEST_PROBE_LOCKS"

// Byte offsets of SQLite's locks in the -shm file of the unix VFS: the
// read marks WAL_READ_LOCK(0..4) and the "dead man switch" that every
// process using the WAL index holds shared. A process that can lock the
// switch exclusively takes itself for the only user: it truncates the -shm
// file and rebuilds it, under the mappings of everyone else.
const (
	shmReadMarks = 123
	shmNReadMark = 5
	shmDMS       = 128
)

// dbShared is the range of the database file's SHARED locks (from
// PENDING_BYTE+2, 510 bytes), which every connection of a WAL store holds
// while its WAL is open: a process that can lock it exclusively takes
// itself for the last user and checkpoints, then deletes the WAL.
const (
	dbShared  = 0x40000000 + 2
	dbNShared = 510
)

// probeLocks runs the test binary again as TestLockProbe on the given
// "name=path@offset+length" entries and returns its output.
func probeLocks(t *testing.T, entries ...string) string {
	t.Helper()
	out, err := testutil.RunChild(context.Background(), t, "TestLockProbe", probeLocksEnv+"="+strings.Join(entries, ";"))
	require.NoError(t, err, "%s", out)
	return string(out)
}

// TestSharedMemoryLocksKept checks, from another process, that a store
// that has read (so that its readers watch the WAL index, and one keeps a
// read transaction) still holds SQLite's locks on the -shm file: POSIX
// record locks belong to the process and any close of any descriptor of
// the file drops all of them, so watching the WAL index must never open
// and close the file behind SQLite's back. Without the locks another
// process truncates the -shm file under this one's mappings (reads fail
// with SQLITE_IOERR_IN_PAGE) and checkpoints over pages a reader still
// reads (SQLITE_CORRUPT).
func TestSharedMemoryLocksKept(t *testing.T) {
	path := tempPath(t)
	db := openAt(t, path, kvstore.Options{ReadHold: time.Hour})
	require.NoError(t, db.Put(b("k"), b("v")))
	for range 3 { // the second read reuses the read transaction of the first
		v, err := db.Get(b("k"))
		require.NoError(t, err)
		require.Equal(t, b("v"), v)
	}
	out := probeLocks(t,
		fmt.Sprintf("dms=%s-shm@%d+1", path, shmDMS),
		fmt.Sprintf("read=%s-shm@%d+%d", path, shmReadMarks, shmNReadMark))
	pid := fmt.Sprint(os.Getpid())
	require.Contains(t, out, "dms=locked:"+pid+" ", "the WAL index's dead man switch is held:\n%s", out)
	require.Contains(t, out, "read=locked:"+pid+" ", "the held read transaction's read mark is locked:\n%s", out)
	st, err := db.Stats(context.Background())
	require.NoError(t, err)
	require.NotZero(t, st.HeldReads, "the reads reused a held read transaction")
}

// TestSecondOpenKeepsLocks checks that opening a store file that this
// process has open already (another Store, read-only or not) leaves the
// first one's locks on the database file in place: Open reads the file's
// header before SQLite opens it, and must not do so with a descriptor
// whose close would drop them.
func TestSecondOpenKeepsLocks(t *testing.T) {
	path := tempPath(t)
	db := openAt(t, path, kvstore.Options{})
	require.NoError(t, db.Put(b("k"), b("v")))
	entry := fmt.Sprintf("shared=%s@%d+%d", path, dbShared, dbNShared)
	pid := fmt.Sprint(os.Getpid())
	out := probeLocks(t, entry)
	require.Contains(t, out, "shared=locked:"+pid+" ", "the open store holds a SHARED lock:\n%s", out)

	for _, ro := range []bool{true, false} {
		second := openAt(t, path, kvstore.Options{ReadOnly: ro})
		v, err := second.Get(b("k"))
		require.NoError(t, err)
		require.Equal(t, b("v"), v)
		require.NoError(t, second.Close())
		out = probeLocks(t, entry)
		require.Contains(t, out, "shared=locked:"+pid+" ", "read-only %v: the first store's SHARED lock survives a second Open and Close:\n%s", ro, out)
	}
	v, err := db.Get(b("k"))
	require.NoError(t, err)
	require.Equal(t, b("v"), v)
}

// TestLockProbe is the child of the lock tests: for each entry of
// probeLocksEnv it prints "name=free" or "name=locked:<pid>" (the process
// holding a lock that an exclusive lock of the range would wait for); run
// directly it does nothing.
func TestLockProbe(t *testing.T) {
	testutil.ChildOnly(t)
	spec := os.Getenv(probeLocksEnv)
	var sb strings.Builder
	for _, e := range strings.Split(spec, ";") {
		name, rest, _ := strings.Cut(e, "=")
		i := strings.LastIndexByte(rest, '@')
		require.Positive(t, i, "entry %q", e)
		path := rest[:i]
		var start, n int64
		_, err := fmt.Sscanf(rest[i+1:], "%d+%d", &start, &n)
		require.NoError(t, err, "entry %q", e)
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		require.NoError(t, err)
		lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: start, Len: n}
		require.NoError(t, syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk))
		require.NoError(t, f.Close()) // this process holds no lock to lose
		if lk.Type == syscall.F_UNLCK {
			fmt.Fprintf(&sb, "%s=free ", name)
		} else {
			fmt.Fprintf(&sb, "%s=locked:%d ", name, lk.Pid)
		}
	}
	fmt.Println(sb.String())
}

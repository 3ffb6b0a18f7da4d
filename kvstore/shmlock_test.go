//go:build linux || darwin || freebsd || netbsd || openbsd

package kvstore_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// probeShmEnv names the -shm file a child of TestSharedMemoryLocksKept
// probes.
const probeShmEnv = "SNKV_TEST_PROBE_SHM"

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
	if os.Getenv(probeShmEnv) != "" {
		t.Skip("running as a child")
	}
	path := tempPath(t)
	db := openAt(t, path, kvstore.Options{ReadHold: time.Hour})
	require.NoError(t, db.Put(b("k"), b("v")))
	for range 3 { // the second read reuses the read transaction of the first
		v, err := db.Get(b("k"))
		require.NoError(t, err)
		require.Equal(t, b("v"), v)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestSharedMemoryLockProbe$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), probeShmEnv+"="+path+"-shm")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	pid := fmt.Sprint(os.Getpid())
	require.Contains(t, string(out), "dms=locked:"+pid+" ", "the WAL index's dead man switch is held:\n%s", out)
	require.Contains(t, string(out), "read=locked:"+pid+" ", "the held read transaction's read mark is locked:\n%s", out)
	st, err := db.Stats(context.Background())
	require.NoError(t, err)
	require.NotZero(t, st.HeldReads, "the reads reused a held read transaction")
}

// TestSharedMemoryLockProbe is the child of TestSharedMemoryLocksKept: it
// reports who holds the -shm locks; run directly it does nothing.
func TestSharedMemoryLockProbe(t *testing.T) {
	shm := os.Getenv(probeShmEnv)
	if shm == "" {
		t.Skip("only runs as a child of TestSharedMemoryLocksKept")
	}
	f, err := os.OpenFile(shm, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close() // this process holds no lock to lose
	probe := func(start, n int64) string {
		lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: start, Len: n}
		require.NoError(t, syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk))
		if lk.Type == syscall.F_UNLCK {
			return "free"
		}
		return fmt.Sprintf("locked:%d", lk.Pid)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "dms=%s read=%s ", probe(shmDMS, 1), probe(shmReadMarks, shmNReadMark))
	fmt.Println(sb.String())
}

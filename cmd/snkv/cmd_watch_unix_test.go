//go:build unix

package main

import (
	"bytes"
	"os/exec"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TestWatchFollowsAndCtrlC: a following watch prints a change committed by
// another process, and Ctrl-C ends it with exit code 0.
func TestWatchFollowsAndCtrlC(t *testing.T) {
	path := feedFixture(t)
	cmd := exec.Command(snkvBin, "watch", path, "--from", "now")
	var out, stderr testutil.SyncBuffer // the child writes them while the test reads
	cmd.Stdout, cmd.Stderr = &out, &stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	defer db.Close()
	users, err := db.OpenColumnFamily("users")
	require.NoError(t, err)
	// Put until the watch, once started, prints one: it reads from "now",
	// so a put before it started is not shown.
	for deadline := time.Now().Add(30 * time.Second); !bytes.Contains(out.Bytes(), []byte(`"key":"late"`)); time.Sleep(20 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "watch printed nothing; stderr: %s", stderr.Bytes())
		require.NoError(t, users.Put([]byte("late"), []byte("v")))
	}
	require.Equal(t, 0, interruptAndWait(t, cmd, done), string(stderr.Bytes()))
	require.Empty(t, stderr.Bytes())
}

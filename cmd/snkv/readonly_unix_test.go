//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// asUser runs the binary in dir as an unprivileged user: nobody when the
// tests run as root (root may write any file), else the current user.
func asUser(t *testing.T, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(snkvBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), nowEnv+"="+t0.Format(time.RFC3339))
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{out.String(), errb.String(), code}
}

// TestReadOnlyFile runs every command on a store file the user may not
// write, in a directory the user may write (for the -shm file a reader of a
// WAL store needs): read commands work, write commands fail saying why,
// and the file is left as it was.
func TestReadOnlyFile(t *testing.T) {
	path := fixture(t)
	dir := filepath.Dir(path)
	// Let the unprivileged user reach and use the directory.
	for d := dir; d != filepath.Dir(os.TempDir()) && d != "/"; d = filepath.Dir(d) {
		if strings.HasPrefix(d, os.TempDir()) && d != os.TempDir() {
			require.NoError(t, os.Chmod(d, 0o777))
		}
	}
	require.NoError(t, os.Chmod(path, 0o444))
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	for _, args := range [][]string{
		{"ls", path}, {"cf", "list", path}, {"get", path, "user:1"}, {"exists", path, "user:1"},
		{"ttl", path, "--cf", "sessions", "tok-a"}, {"scan", path}, {"stats", path}, {"check", path},
		{"export", path}, {"backup", path, filepath.Join(dir, "copy.db")},
	} {
		r := asUser(t, dir, args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
	}
	r := asUser(t, dir, "get", path, "user:1")
	require.Equal(t, "alice", r.stdout)

	for _, args := range [][]string{
		{"put", path, "k", "v"}, {"del", path, "user:1"}, {"expire", path, "user:1", "5m"},
		{"persist", path, "user:1"}, {"purge", path}, {"cf", "create", path, "x"},
		{"cf", "drop", path, "empty"}, {"checkpoint", path}, {"vacuum", path}, {"import", path},
	} {
		r := asUser(t, dir, args...)
		require.Equal(t, 1, r.code, "%v", args)
		require.Contains(t, r.stderr, "cannot write to the store: permission denied", "%v", args)
		require.Contains(t, r.stderr, "read commands still work")
		requireClean(t, r)
	}
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(before, after), "the file is unchanged")
}

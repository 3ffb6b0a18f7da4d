//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// asUser runs the binary in dir as an unprivileged user: nobody when the
// tests run as root (root may write any file), else the current user.
func asUser(t *testing.T, dir string, args ...string) result {
	t.Helper()
	cmd := snkvCmd(t0, args...)
	cmd.Dir = dir
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	return runCmd(t, cmd, nil)
}

// TestReadOnlyFile runs every command on a store file the user may not
// write, in a directory the user may write (for the -shm file a reader of a
// WAL store needs): read commands work, write commands fail saying why,
// and the file is left as it was.
func TestReadOnlyFile(t *testing.T) {
	path := fixture(t)
	dir := filepath.Dir(path)
	openToAll(t, dir)
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

// userDir makes the fixture's directory and store usable by the user
// asUser runs as, and returns the store's path.
func userDir(t *testing.T) string {
	t.Helper()
	path := fixture(t)
	dir := filepath.Dir(path)
	for d := dir; d != filepath.Dir(os.TempDir()) && d != "/"; d = filepath.Dir(d) {
		if strings.HasPrefix(d, os.TempDir()) && d != os.TempDir() {
			require.NoError(t, os.Chmod(d, 0o777))
		}
	}
	if os.Geteuid() == 0 {
		require.NoError(t, os.Chown(path, 65534, 65534))
	}
	return path
}

// TestReadOnlyRunThenWrite is the sequence of a store made read-only for a
// while: a read command while the file is read-only, then, the file
// writable again, a write command. The write either works, or fails
// naming the file beside the store that blocks it and what to do; done,
// the write works. Run as an unprivileged user (root may write anything).
func TestReadOnlyRunThenWrite(t *testing.T) {
	path := userDir(t)
	dir := filepath.Dir(path)
	require.NoError(t, os.Chmod(path, 0o444))
	r := asUser(t, dir, "get", path, "user:1")
	require.Equal(t, 0, r.code, r.stderr)
	require.NoError(t, os.Chmod(path, 0o644))

	r = asUser(t, dir, "put", path, "k", "v")
	requireClean(t, r)
	if r.code != 0 {
		require.Equal(t, 1, r.code, r.stderr)
		require.NotContains(t, r.stderr, "snkv: snkv:")
		require.Contains(t, r.stderr, path+"-shm", "the message names the file that blocks the write")
		require.Contains(t, r.stderr, "chmod u+w "+path+"-shm")
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %s", r.stderr)
		// Do what it says (as the file's owner would), then write again.
		for _, suffix := range []string{"-shm", "-wal"} {
			if _, err := os.Stat(path + suffix); err == nil {
				require.NoError(t, os.Chmod(path+suffix, 0o644))
			}
		}
		r = asUser(t, dir, "put", path, "k", "v")
		require.Equal(t, 0, r.code, r.stderr)
	}
	r = asUser(t, dir, "get", path, "k")
	require.Equal(t, result{"v", "", 0}, r)
}

// TestStaleReadOnlyShm puts a -shm file that belongs to another user and
// that the user may not write beside a writable store, as a read-only open
// by that user can leave it: a write command fails with exit code 1,
// naming the file, its owner and what to do, and the store is unchanged.
func TestStaleReadOnlyShm(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to leave a file of another user beside the store")
	}
	path := userDir(t)
	dir := filepath.Dir(path)
	shm := path + "-shm"
	require.NoError(t, os.WriteFile(shm, nil, 0o444))
	require.NoError(t, os.Chmod(shm, 0o444)) // whatever the umask
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	r := asUser(t, dir, "put", path, "k", "v")
	if r.code == 0 {
		t.Skip("the store took the write despite the read-only -shm file: nothing to report")
	}
	require.Equal(t, 1, r.code, r.stderr)
	require.Equal(t, "snkv: "+path+": cannot write to the store: "+shm+" beside it cannot be written by you"+
		" (a read-only open of the store while its file was read-only leaves it so):"+
		" its owner (root) can give you write access to it, then run the command again;"+
		" a -shm file may instead be deleted when no program has the store open\n", r.stderr)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(before, after), "the store is unchanged")

	// Deleting the -shm file (no program has the store open) lets the
	// write through.
	require.NoError(t, os.Remove(shm))
	r = asUser(t, dir, "put", path, "k", "v")
	require.Equal(t, 0, r.code, r.stderr)
}

// openToAll lets the unprivileged user reach and use dir: it and the
// directories above it up to the temporary directory become rwx for all.
func openToAll(t *testing.T, dir string) {
	t.Helper()
	for d := dir; d != filepath.Dir(os.TempDir()) && d != "/"; d = filepath.Dir(d) {
		if strings.HasPrefix(d, os.TempDir()) && d != os.TempDir() {
			require.NoError(t, os.Chmod(d, 0o777))
		}
	}
}

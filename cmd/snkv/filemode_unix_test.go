//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// modeOf returns the permission bits of path.
func modeOf(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Mode().Perm()
}

// --file-mode sets the mode of every file a command creates (a new store,
// a backup, an export), with the umask at 0 so that nothing narrows it;
// without it they are 0600; a mode the owner cannot read and write, or
// that is not octal, is refused as a usage error and creates nothing.
func TestFileModeFlag(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	dir := t.TempDir()
	store := filepath.Join(dir, "s.db")

	r := cli(t, nil, "put", store, "k", "v", "--create", "--file-mode", "0640")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, os.FileMode(0o640), modeOf(t, store))
	r = cli(t, nil, "backup", store, filepath.Join(dir, "b.db"), "--file-mode", "0644")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, os.FileMode(0o644), modeOf(t, filepath.Join(dir, "b.db")))
	r = cli(t, nil, "export", store, "--out", filepath.Join(dir, "e.jsonl"), "--file-mode", "0660")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, os.FileMode(0o660), modeOf(t, filepath.Join(dir, "e.jsonl")))

	// The defaults: owner only.
	plain := filepath.Join(dir, "p.db")
	require.Equal(t, 0, cli(t, nil, "put", plain, "k", "v", "--create").code)
	require.Equal(t, os.FileMode(0o600), modeOf(t, plain))
	require.Equal(t, 0, cli(t, nil, "export", plain, "--out", filepath.Join(dir, "p.jsonl")).code)
	require.Equal(t, os.FileMode(0o600), modeOf(t, filepath.Join(dir, "p.jsonl")))

	for _, bad := range []string{"0400", "0444", "640x", "01777"} {
		r := cli(t, nil, "put", filepath.Join(dir, "bad.db"), "k", "v", "--create", "--file-mode", bad)
		require.Equal(t, exitUsage, r.code, "--file-mode %s: %s", bad, r.stderr)
		requireClean(t, r)
		require.NoFileExists(t, filepath.Join(dir, "bad.db"))
	}
}

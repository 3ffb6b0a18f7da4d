//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTimelogReadOnlyFile runs the timelog commands on a store file the
// user may not write: they work, leave the file as it was, and create no
// writer-lock file.
func TestTimelogReadOnlyFile(t *testing.T) {
	path := logFixture(t)
	dir := filepath.Dir(path)
	openToAll(t, dir)
	locks, err := filepath.Glob(path + ".timelog-*.lock")
	require.NoError(t, err)
	for _, l := range locks { // left by the fixture's writers
		require.NoError(t, os.Remove(l))
	}
	require.NoError(t, os.Chmod(path, 0o444))
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	for _, args := range [][]string{
		{"ls", path}, {"timelog", "ls", path}, {"timelog", "count", path, "cpu"},
		{"timelog", "range", path, "cpu"}, {"timelog", "tail", path, "edge"}, {"timelog", "stats", path, "idle"},
	} {
		r := asUser(t, dir, args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
	}
	r := asUser(t, dir, "timelog", "count", path, "cpu")
	require.Equal(t, "10\n", r.stdout)

	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(before, after), "the file is unchanged")
	locks, err = filepath.Glob(path + ".timelog-*.lock")
	require.NoError(t, err)
	require.Empty(t, locks, "a read-only open takes no writer lock")
}

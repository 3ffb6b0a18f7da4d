package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBackup writes a copy that holds what the store holds, and refuses a
// destination that exists or whose directory does not.
func TestBackup(t *testing.T) {
	path := fixture(t)
	backup := filepath.Join(filepath.Dir(path), "backup.db")
	runSteps(t, path)
	r := cli(t, nil, "ls", backup)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, cli(t, nil, "ls", path).stdout, r.stdout, "the backup holds what the store holds")
}

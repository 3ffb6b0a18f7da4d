package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVecSearch searches by a vector, a file, another key, with filters; a missing index is exit code 3; QJSON is a file holding [0.9, 0.1, 0].
func TestVecSearch(t *testing.T) {
	dir := t.TempDir()
	qfile := filepath.Join(dir, "q.json")
	require.NoError(t, os.WriteFile(qfile, []byte("[0.9, 0.1, 0]"), 0o600))
	runSteps(t, filepath.Join(dir, "vec.db"), "QJSON", qfile)
}

// TestVecSearchBadInput: vec refuses -k under 1, a negative --ef or --max-distance, and shows values in a table with --values.
func TestVecSearchBadInput(t *testing.T) {
	runSteps(t, filepath.Join(t.TempDir(), "vec.db"))
}

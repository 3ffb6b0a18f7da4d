package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVecPut puts from --vector and stdin, with metadata, a value and a TTL; a vector of the wrong dimension, a zero cosine vector and two inputs are usage errors; QJSON is a file holding [0.9, 0.1, 0].
func TestVecPut(t *testing.T) {
	runStepsWithQuery(t)
}

// TestVecPutBadInput: vec takes TTLs as every other command does (days; under a millisecond, negative or empty: exit code 2) and --expire-at; --hex and --base64 decode --value too.
func TestVecPutBadInput(t *testing.T) {
	runSteps(t, filepath.Join(t.TempDir(), "vec.db"))
}

// runStepsWithQuery runs the test's steps on a new store, QJSON standing
// for a file holding [0.9, 0.1, 0].
func runStepsWithQuery(t *testing.T) {
	dir := t.TempDir()
	qfile := filepath.Join(dir, "q.json")
	require.NoError(t, os.WriteFile(qfile, []byte("[0.9, 0.1, 0]"), 0o600))
	runSteps(t, filepath.Join(dir, "vec.db"), "QJSON", qfile)
}

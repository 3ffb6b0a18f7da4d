package main

import (
	"path/filepath"
	"testing"
)

// TestVecSearch searches by a vector, a file, another key, with filters; a missing index is exit code 3; QJSON is a file holding [0.9, 0.1, 0].
func TestVecSearch(t *testing.T) {
	runStepsWithQuery(t)
}

// TestVecSearchBadInput: vec refuses -k under 1, a negative --ef or --max-distance, and shows values in a table with --values.
func TestVecSearchBadInput(t *testing.T) {
	runSteps(t, filepath.Join(t.TempDir(), "vec.db"))
}

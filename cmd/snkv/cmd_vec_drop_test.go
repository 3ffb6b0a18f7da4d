package main

import (
	"path/filepath"
	"testing"
)

// TestVecDrop: vec deletes an index with its vectors.
func TestVecDrop(t *testing.T) {
	runSteps(t, filepath.Join(t.TempDir(), "vec.db"))
}

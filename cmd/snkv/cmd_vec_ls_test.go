package main

import (
	"path/filepath"
	"testing"
)

// TestVecLs: vec lists the indexes, and none after a drop.
func TestVecLs(t *testing.T) {
	runSteps(t, filepath.Join(t.TempDir(), "vec.db"))
}

package main

import (
	"path/filepath"
	"testing"
)

// TestVecRebuild: vec on a sound index rebuilds nothing and says so by printing nothing.
func TestVecRebuild(t *testing.T) {
	runSteps(t, filepath.Join(t.TempDir(), "vec.db"))
}

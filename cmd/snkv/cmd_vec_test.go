package main

import (
	"path/filepath"
	"testing"
)

// TestVec: an unknown vec subcommand is a usage error.
func TestVec(t *testing.T) {
	runSteps(t, filepath.Join(t.TempDir(), "vec.db"))
}

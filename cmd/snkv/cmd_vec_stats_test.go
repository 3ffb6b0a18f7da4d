package main

import (
	"path/filepath"
	"testing"
)

// TestVecStats: vec shows an index's figures as JSON after a delete.
func TestVecStats(t *testing.T) {
	runSteps(t, filepath.Join(t.TempDir(), "vec.db"))
}

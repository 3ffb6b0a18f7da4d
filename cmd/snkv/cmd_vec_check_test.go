package main

import (
	"path/filepath"
	"testing"
)

// TestVecCheck: vec checks every index's rows.
func TestVecCheck(t *testing.T) {
	runSteps(t, filepath.Join(t.TempDir(), "vec.db"))
}

package main

import (
	"path/filepath"
	"testing"
)

// TestVecCreate: vec creates an index once; a second create and a --dim out of range fail.
func TestVecCreate(t *testing.T) {
	runSteps(t, filepath.Join(t.TempDir(), "vec.db"))
}

package main

import (
	"path/filepath"
	"testing"
)

// TestVecDel: vec deletes a key; deleting it again is exit code 3.
func TestVecDel(t *testing.T) {
	runSteps(t, filepath.Join(t.TempDir(), "vec.db"))
}

// TestVecDelBadInput: vec goes through every key, deletes the ones present and names the missing ones.
func TestVecDelBadInput(t *testing.T) {
	runSteps(t, filepath.Join(t.TempDir(), "vec.db"))
}

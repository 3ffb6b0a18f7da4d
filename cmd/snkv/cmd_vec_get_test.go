package main

import (
	"path/filepath"
	"testing"
)

// TestVecGet: vec prints the vectors, values and metadata of keys; a missing key is exit code 3.
func TestVecGet(t *testing.T) {
	runSteps(t, filepath.Join(t.TempDir(), "vec.db"))
}

// TestVecGetBadInput: vec goes through every key and names the missing ones, and writes keys and values that are not UTF-8 in base64, as export does.
func TestVecGetBadInput(t *testing.T) {
	runSteps(t, filepath.Join(t.TempDir(), "vec.db"))
}

package main

import "testing"

// TestCheckpoint refuses an unknown checkpoint mode.
func TestCheckpoint(t *testing.T) {
	runSteps(t, fixture(t))
}

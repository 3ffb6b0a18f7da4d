package main

import "testing"

// TestExists answers true or false, and says it with the exit code too.
func TestExists(t *testing.T) {
	runSteps(t, fixture(t))
}

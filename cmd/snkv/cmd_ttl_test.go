package main

import "testing"

// TestTTL prints the time a key has left, or "permanent".
func TestTTL(t *testing.T) {
	runSteps(t, fixture(t))
}

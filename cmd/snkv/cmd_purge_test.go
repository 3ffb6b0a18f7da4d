package main

import "testing"

// TestPurge removes the expired keys of every column family, or of one.
func TestPurge(t *testing.T) {
	runSteps(t, fixture(t))
}

package main

import "testing"

// TestRepair finds nothing to repair in a sound store.
func TestRepair(t *testing.T) {
	runSteps(t, fixture(t))
}

package main

import "testing"

// TestCount counts the live keys, all of them or those selected.
func TestCount(t *testing.T) {
	runSteps(t, fixture(t))
}

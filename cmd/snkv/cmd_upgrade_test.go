package main

import "testing"

// TestUpgrade says that a store of the current format is current, and
// changes nothing.
func TestUpgrade(t *testing.T) {
	runSteps(t, fixture(t))
}

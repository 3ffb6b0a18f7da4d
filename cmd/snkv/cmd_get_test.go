package main

import "testing"

// TestGet prints one value (its exact bytes off a terminal) or a table of several.
func TestGet(t *testing.T) {
	runSteps(t, fixture(t))
}

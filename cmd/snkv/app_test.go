package main

import "testing"

// TestUsage refuses bad command lines with exit code 2 and a line pointing to the help.
func TestUsage(t *testing.T) {
	runSteps(t, fixture(t))
}

package main

import "testing"

// TestStats shows the figures of the file and of its keys.
func TestStats(t *testing.T) {
	runSteps(t, fixture(t))
}

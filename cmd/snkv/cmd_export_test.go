package main

import "testing"

// TestExport writes the selected keys as JSON Lines or TSV.
func TestExport(t *testing.T) {
	runSteps(t, fixture(t))
}

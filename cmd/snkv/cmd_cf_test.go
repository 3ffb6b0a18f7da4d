package main

import "testing"

// TestCF creates, drops, clears and lists column families.
func TestCF(t *testing.T) {
	runSteps(t, fixture(t))
}

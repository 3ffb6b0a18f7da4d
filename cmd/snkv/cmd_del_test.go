package main

import "testing"

// TestDel deletes keys in one transaction and names the missing ones.
func TestDel(t *testing.T) {
	runSteps(t, fixture(t))
}

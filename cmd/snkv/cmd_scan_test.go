package main

import "testing"

// TestScan lists ranges, prefixes and glob patterns in key order.
func TestScan(t *testing.T) {
	runSteps(t, fixture(t))
}

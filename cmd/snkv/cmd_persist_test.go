package main

import "testing"

// TestPersist makes a key with a TTL permanent.
func TestPersist(t *testing.T) {
	runSteps(t, fixture(t))
}

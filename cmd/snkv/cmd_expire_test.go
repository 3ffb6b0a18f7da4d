package main

import "testing"

// TestExpire gives an existing key a TTL without rewriting its value.
func TestExpire(t *testing.T) {
	runSteps(t, fixture(t))
}

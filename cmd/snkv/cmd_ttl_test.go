package main

import (
	"testing"
)

// TestTTL prints the time a key has left, or "permanent".
func TestTTL(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "ttl-permanent", args: "ttl FILE user:1"},
		{name: "ttl", args: "ttl --cf sessions FILE tok-b"},
		{name: "ttl-expired", args: "ttl FILE --cf sessions tok-old", code: 3},
	})
}

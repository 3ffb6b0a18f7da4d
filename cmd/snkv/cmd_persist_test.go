package main

import (
	"testing"
)

// TestPersist makes a key with a TTL permanent.
func TestPersist(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "w-persist", args: "persist FILE --cf sessions tok-a"},
		{name: "w-ttl-after", args: "scan FILE --cf sessions --with-ttl --keys-only"},
	})
}

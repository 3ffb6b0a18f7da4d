package main

import (
	"testing"
)

// TestExpire gives an existing key a TTL without rewriting its value.
func TestExpire(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "w-expire", args: "expire FILE --cf sessions perm 10m"},
		{name: "w-expire-after", args: "scan FILE --cf sessions --with-ttl --keys-only"},
		{name: "w-expire-missing", args: "expire FILE --cf sessions nope 10m", code: 3},
		{name: "usage-expire-ttl-empty", args: "expire FILE user:1 --ttl=", code: 2},
		{name: "usage-expire-ttl-1ns", args: "expire FILE user:1 1ns", code: 2},
		{name: "usage-expire-at-now", args: "expire FILE user:1 --expire-at 2030-01-02T03:04:05Z", code: 2},
	})
}

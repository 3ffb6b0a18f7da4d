package main

import (
	"testing"
)

// TestExists answers true or false, and says it with the exit code too.
func TestExists(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "exists", args: "exists FILE user:1"},
		{name: "exists-missing", args: "exists FILE nope", code: 3},
		{name: "exists-many", args: "exists FILE user:1 nope user:2", code: 3},
		{name: "exists-many-all", args: "exists FILE user:1 user:2 --no-header"},
		{name: "exists-many-json", args: "exists FILE user:1 nope --json", code: 3},
	})
}

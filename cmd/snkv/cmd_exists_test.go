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
	})
}

package main

import (
	"testing"
)

// TestRepair finds nothing to repair in a sound store.
func TestRepair(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "w-repair-json", args: "repair FILE --json"},
	})
}

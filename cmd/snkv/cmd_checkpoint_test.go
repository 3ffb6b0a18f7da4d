package main

import (
	"testing"
)

// TestCheckpoint refuses an unknown checkpoint mode.
func TestCheckpoint(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "usage-checkpoint-mode", args: "checkpoint FILE --mode sideways", code: 2},
	})
}

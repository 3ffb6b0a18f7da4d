package main

import (
	"testing"
)

// TestStats shows the figures of the file and of its keys.
func TestStats(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "stats", args: "stats FILE"},
	})
}

package main

import (
	"testing"
)

// TestCheck checks a sound store: "ok" and its row counts.
func TestCheck(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "check", args: "check FILE"},
	})
}

// TestCheckWithLogs checks a store with time-series logs.
func TestCheckWithLogs(t *testing.T) {
	path := logFixture(t)
	runGolden(t, path, []step{
		{name: "tl-check", args: "check FILE"},
	})
}

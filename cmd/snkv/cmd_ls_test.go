package main

import (
	"testing"
)

// TestLs lists the column families with their key counts.
func TestLs(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "ls", args: "ls FILE"},
		{name: "usage-flag-not-taken", args: "ls FILE --cf sessions", code: 2},
		{name: "ls-no-header", args: "ls FILE --no-header"},
		{name: "usage-no-header-not-taken", args: "count FILE --no-header", code: 2},
	})
}

// TestLsWithLogs lists the time-series logs after the column families.
func TestLsWithLogs(t *testing.T) {
	path := logFixture(t)
	runGolden(t, path, []step{
		{name: "tl-ls-with-logs", args: "ls FILE"},
	})
}

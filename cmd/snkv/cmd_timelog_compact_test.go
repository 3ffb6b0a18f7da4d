package main

import (
	"testing"
)

// TestTimelogCompact merges overlapping pages and drops deleted records.
func TestTimelogCompact(t *testing.T) {
	path := logFixture(t)
	runGolden(t, path, []step{
		{name: "tlw-compact-delete-before", args: "timelog delete-before FILE cpu 1893553450000"},
		{name: "tlw-compact", args: "timelog compact FILE cpu"},
		{name: "tlw-ls-after", args: "timelog ls FILE"},
		{name: "tlw-compact-missing", args: "timelog compact FILE nope", code: 3},
	})
}

package main

import (
	"testing"
)

// TestTimelogLs lists the logs with their counts, pages and first and last timestamps.
func TestTimelogLs(t *testing.T) {
	path := logFixture(t)
	runGolden(t, path, []step{
		{name: "tl-ls", args: "timelog ls FILE"},
		{name: "tl-usage-no-subcommand", args: "timelog FILE", code: 2},
		{name: "tlw-usage-ls-time-unit", args: "timelog ls FILE --time-unit s", code: 2},
	})
}

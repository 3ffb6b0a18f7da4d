package main

import (
	"testing"
)

// TestTimelogRange lists the records of a range, forwards or backwards, to the ends of the int64 range.
func TestTimelogRange(t *testing.T) {
	path := logFixture(t)
	runGolden(t, path, []step{
		{name: "tl-range", args: "timelog range FILE cpu --start 1893553446000 --end 1893553449000"},
		{name: "tl-range-reverse-limit", args: "timelog range FILE cpu --reverse --limit 3"},
		{name: "tl-range-time-unit", args: "timelog range FILE cpu --time-unit ms --start 2030-01-02T03:04:10Z"},
		{name: "tl-range-edge", args: "timelog range FILE edge --time-unit s"},
		{name: "tl-range-edge-negative", args: "timelog range FILE edge --end=-1"},
		{name: "tl-missing-log-range", args: "timelog range FILE nope --limit 1", code: 3},
		{name: "tl-usage-bad-ts", args: "timelog range FILE cpu --start soon", code: 2},
		{name: "tl-usage-start-after-end", args: "timelog range FILE cpu --start 10 --end 5", code: 2},
	})
}

package main

import (
	"testing"
)

// TestTimelogCount counts the records of a log, all or in a range given as integers or RFC 3339.
func TestTimelogCount(t *testing.T) {
	path := logFixture(t)
	runGolden(t, path, []step{
		{name: "tl-count", args: "timelog count FILE cpu"},
		{name: "tl-count-range", args: "timelog count FILE cpu --start 1893553446000 --end 1893553449000"},
		{name: "tl-count-rfc3339", args: "timelog count FILE cpu --time-unit ms --start 2030-01-02T03:04:06Z --end 2030-01-02T03:04:09.0001Z"},
		{name: "tl-count-edge-start", args: "timelog count FILE edge --start 0"},
		{name: "tl-count-edge-end", args: "timelog count FILE edge --end 0"},
		{name: "tl-count-empty-range", args: "timelog count FILE cpu --start 5 --end 5"},
		{name: "tl-missing-log", args: "timelog count FILE nope", code: 3},
		{name: "tl-usage-rfc3339-no-unit", args: "timelog count FILE cpu --start 2030-01-02T03:04:05Z", code: 2},
		{name: "tl-usage-missing-log-arg", args: "timelog count FILE", code: 2},
	})
}

package main

import (
	"testing"
)

// TestTimelogTail lists the newest records of a log.
func TestTimelogTail(t *testing.T) {
	path := logFixture(t)
	runGolden(t, path, []step{
		{name: "tl-tail", args: "timelog tail FILE cpu -n 3"},
		{name: "tl-tail-time-unit", args: "timelog tail FILE cpu --time-unit ms"},
		{name: "tl-tail-idle", args: "timelog tail FILE idle"},
		{name: "tl-usage-bad-unit", args: "timelog tail FILE cpu --time-unit h", code: 2},
	})
}

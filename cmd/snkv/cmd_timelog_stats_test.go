package main

import (
	"testing"
)

// TestTimelogStats shows the figures of one log.
func TestTimelogStats(t *testing.T) {
	path := logFixture(t)
	runGolden(t, path, []step{
		{name: "tl-stats", args: "timelog stats FILE cpu --time-unit ms"},
		{name: "tl-stats-idle", args: "timelog stats FILE idle"},
	})
}

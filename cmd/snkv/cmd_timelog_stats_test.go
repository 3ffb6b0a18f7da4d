package main

import "testing"

// TestTimelogStats shows the figures of one log.
func TestTimelogStats(t *testing.T) {
	runSteps(t, logFixture(t))
}

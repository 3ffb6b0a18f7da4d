package main

import "testing"

// TestTimelogTail lists the newest records of a log.
func TestTimelogTail(t *testing.T) {
	runSteps(t, logFixture(t))
}

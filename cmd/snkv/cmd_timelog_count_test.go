package main

import "testing"

// TestTimelogCount counts the records of a log, all or in a range given as integers or RFC 3339.
func TestTimelogCount(t *testing.T) {
	runSteps(t, logFixture(t))
}

package main

import "testing"

// TestTimelogLs lists the logs with their counts, pages and first and last timestamps.
func TestTimelogLs(t *testing.T) {
	runSteps(t, logFixture(t))
}

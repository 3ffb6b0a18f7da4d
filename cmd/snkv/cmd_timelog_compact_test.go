package main

import "testing"

// TestTimelogCompact merges overlapping pages and drops deleted records.
func TestTimelogCompact(t *testing.T) {
	runSteps(t, logFixture(t))
}

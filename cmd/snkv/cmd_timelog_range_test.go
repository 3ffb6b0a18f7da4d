package main

import "testing"

// TestTimelogRange lists the records of a range, forwards or backwards, to the ends of the int64 range.
func TestTimelogRange(t *testing.T) {
	runSteps(t, logFixture(t))
}

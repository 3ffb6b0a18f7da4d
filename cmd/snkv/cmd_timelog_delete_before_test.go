package main

import "testing"

// TestTimelogDeleteBefore deletes the records before a timestamp and says how many.
func TestTimelogDeleteBefore(t *testing.T) {
	runSteps(t, logFixture(t))
}

package main

import "testing"

// TestCheck checks a sound store: "ok" and its row counts.
func TestCheck(t *testing.T) {
	runSteps(t, fixture(t))
}

// TestCheckWithLogs checks a store with time-series logs.
func TestCheckWithLogs(t *testing.T) {
	runSteps(t, logFixture(t))
}

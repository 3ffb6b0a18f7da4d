package main

import (
	"testing"
)

// TestUpgrade says that a store of the current format is current, and
// changes nothing.
func TestUpgrade(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "w-upgrade-current", args: "upgrade FILE"},
		{name: "w-upgrade-current-json", args: "upgrade FILE --json"},
	})
}

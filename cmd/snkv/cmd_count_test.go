package main

import (
	"testing"
)

// TestCount counts the live keys, all of them or those selected.
func TestCount(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "count", args: "count FILE"},
		{name: "count-cf", args: "count FILE --cf sessions --json"},
		{name: "count-prefix", args: "count FILE --prefix user:"},
		{name: "count-match", args: "count FILE --match *:?"},
		{name: "usage-count-start-after-end", args: "count FILE --start z --end a", code: 2},
		{name: "count-range", args: "count FILE --start b --end user:2"},
	})
}

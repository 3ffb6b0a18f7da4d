package main

import (
	"testing"
)

// TestUsage refuses bad command lines with exit code 2 and a line pointing to the help.
func TestUsage(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "usage-no-args", args: "get", code: 2},
		{name: "usage-too-many", args: "ttl FILE a b", code: 2},
		{name: "usage-flag-not-taken-hex", args: "stats FILE --hex", code: 2},
		{name: "usage-timelog-typo", args: "timelog lss FILE", code: 2},
		{name: "usage-unknown-command", args: "gte FILE k", code: 2},
		{name: "usage-unknown-flag", args: "get FILE k --bogus", code: 2},
		{name: "usage-bad-hex", args: "get FILE --hex zz", code: 2},
		{name: "usage-hex-and-base64", args: "get FILE --hex --base64 00", code: 2},
		{name: "usage-bad-cf-name", args: "get FILE --cf __snkv_catalog k", code: 2},
	})
}

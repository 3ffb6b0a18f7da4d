package main

import (
	"testing"
)

// TestCF creates, drops, clears and lists column families.
func TestCF(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "cf-list", args: "cf list FILE"},
		{name: "w-cf-create", args: "cf create FILE logs"},
		{name: "w-cf-create-exists", args: "cf create FILE LOGS", code: 1},
		{name: "w-cf-drop-nonempty", args: "cf drop FILE sessions", code: 1},
		{name: "w-cf-drop-default", args: "cf drop FILE default", code: 1},
		{name: "w-cf-drop-missing", args: "cf drop FILE nope", code: 3},
		{name: "w-cf-drop", args: "cf drop FILE logs"},
		{name: "w-cf-clear", args: "cf clear FILE sessions --json"},
		{name: "w-cf-clear-after", args: "ls FILE"},
		{name: "w-cf-clear-missing", args: "cf clear FILE nope", code: 3},
		{name: "usage-cf-typo", args: "cf creat FILE x", code: 2},
		{name: "usage-cf-no-subcommand", args: "cf", code: 2},
		{name: "usage-cf-unknown", args: "cf frobnicate FILE", code: 2},
	})
}

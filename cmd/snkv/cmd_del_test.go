package main

import (
	"testing"
)

// TestDel deletes keys in one transaction and names the missing ones.
func TestDel(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "w-del", args: "del FILE user:1"},
		{name: "w-del-missing", args: "del FILE user:1", code: 3},
		{name: "w-del-many", args: "del FILE user:2 nope user:3 --json", code: 3},
		{name: "w-del-many-after", args: "scan FILE --prefix user: --keys-only"},
	})
}

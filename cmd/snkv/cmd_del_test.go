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
		{name: "w-del-prefix", args: "del FILE --prefix b"},
		{name: "w-del-range", args: "del FILE --start c --end d --json"},
		{name: "w-del-range-after", args: "scan FILE --keys-only"},
		{name: "w-del-range-batches", args: "del FILE --cf sessions --start p --batch 1"},
		{name: "w-del-range-batches-after", args: "ls FILE"},
		{name: "usage-del-keys-and-range", args: "del FILE k --prefix a", code: 2},
		{name: "usage-del-everything", args: "del FILE --prefix=", code: 2},
		{name: "usage-del-no-key", args: "del FILE", code: 2},
		{name: "usage-del-batch-without-range", args: "del FILE k --batch 5", code: 2},
		{name: "usage-del-reversed", args: "del FILE --start z --end a", code: 2},
	})
}

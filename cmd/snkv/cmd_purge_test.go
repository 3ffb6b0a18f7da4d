package main

import (
	"testing"
)

// TestPurge removes the expired keys of every column family, or of one.
func TestPurge(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "w-ls-before-purge", args: "ls FILE"},
		{name: "w-purge", args: "purge FILE"},
		{name: "w-ls-after-purge", args: "ls FILE"},
		{name: "w-purge-cf", args: "purge FILE --cf sessions"},
	})
}

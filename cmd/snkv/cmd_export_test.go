package main

import (
	"testing"
)

// TestExport writes the selected keys as JSON Lines or TSV.
func TestExport(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "export-cf", args: "export FILE --cf sessions"},
		{name: "export-prefix", args: "export FILE --prefix tok-"},
		{name: "export-match", args: "export FILE --cf default --match user:?"},
		{name: "export-tsv", args: "export FILE --format tsv"},
		{name: "export-tsv-cf", args: "export FILE --format tsv --cf sessions"},
		{name: "usage-export-start-after-end", args: "export FILE --start z --end a", code: 2},
		{name: "usage-bad-format", args: "export FILE --format csv", code: 2},
	})
}

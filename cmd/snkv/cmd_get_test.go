package main

import (
	"testing"
)

// TestGet prints one value (its exact bytes off a terminal) or a table of several.
func TestGet(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "get", args: "get FILE user:1"},
		{name: "get-escaped", args: "get FILE --hex 62696e00ff"},
		{name: "get-utf8-escaped", args: `get FILE back\slash`},
		{name: "get-empty", args: "get FILE zero"},
		{name: "get-base64", args: "get FILE --base64 dXNlcjoy"},
		{name: "get-stdin", args: "get FILE -", stdin: "user:3"},
		{name: "get-raw", args: "get FILE --hex 62696e00ff --raw"},
		{name: "get-escape", args: "get FILE --hex 62696e00ff --escape"},
		{name: "get-escape-utf8", args: `get FILE back\slash --escape`},
		{name: "get-many-hex", args: "get FILE --hex 757365723a31 62696e00ff"},
		{name: "get-many-table", args: `get FILE user:1 back\slash config`},
		{name: "get-many-missing", args: "get FILE user:1 nope user:2 gone", code: 3},
		{name: "get-many-json", args: "get FILE user:1 user:2 --json"},
		{name: "get-many-escape", args: `get FILE back\slash user:1 --escape`},
		{name: "get-tsv", args: "get FILE user:1 --format tsv"},
		{name: "get-many-tsv", args: "get FILE --hex 757365723a31 62696e00ff 6e6f7065 --format tsv", code: 3},
		{name: "get-many-no-header", args: "get FILE user:1 user:2 --no-header"},
		{name: "get-missing", args: "get FILE nope", code: 3},
		{name: "get-missing-cf", args: "get FILE --cf nope k", code: 3},
		{name: "w-open-missing-dir", args: "get nowhere/new.db k", code: 1},
	})
}

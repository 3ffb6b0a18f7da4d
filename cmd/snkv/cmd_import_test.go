package main

import (
	"testing"
)

// TestImport loads JSON Lines and TSV, all-or-nothing per column family
// or in batches, and refuses bad lines.
func TestImport(t *testing.T) {
	path := fixture(t)
	runGolden(t, path, []step{
		{name: "w-import", args: "import FILE", stdin: `{"cf":"imported","key":"a","value":"1"}
{"cf":"imported","key_base64":"AP8=","value_base64":"/wA=","expire_ms":1893560645001}
{"cf":"imported","key":"gone","value":"x","expire_ms":1893553445000}

{"cf":"Quiet"}
{"cf":"default","key":"user:9","value":"ivy"}
`},
		{name: "w-import-exported", args: "export FILE --cf imported"},
		{name: "w-import-bad-line", args: "import FILE", code: 1, stdin: `{"cf":"other","key":"a","value":"1"}
{"cf":"other","key":"b","value":1}
`},
		{name: "w-import-unknown-field", args: "import FILE", code: 1, stdin: `{"cf":"other","key":"a","valeu":"1"}
`},
		{name: "w-import-mixed", args: "import FILE", code: 1, stdin: `{"cf":"x1","key":"a","value":"1"}
{"cf":"x2","key":"a","value":"1"}
{"cf":"x1","key":"b","value":"1"}
`},
		{name: "w-import-mixed-batch", args: "import FILE --batch 2", stdin: `{"cf":"x1","key":"a","value":"1"}
{"cf":"x2","key":"a","value":"1"}
{"cf":"x1","key":"b","value":"1"}
`},
		{name: "w-ls-after-import", args: "ls FILE"},
		{name: "w-import-tsv", args: "import FILE --format tsv --cf tsv", stdin: "plain\tvalue\nesc\\x00aped\ttab\\there\\nnewline\ncaf\xc3\xa9\tlater\t1893560645001\nold\tgone\t1893553445000\n"},
		{name: "w-import-tsv-scan", args: "scan FILE --cf tsv --with-ttl"},
		{name: "w-import-tsv-export", args: "export FILE --cf tsv --format tsv"},
		{name: "w-import-tsv-bad", args: "import FILE --format tsv --cf tsv", stdin: "only-one-field\n", code: 1},
		{name: "w-check", args: "check FILE"},
		{name: "usage-import-cf-jsonl", args: "import FILE --cf x", code: 2},
	})
}

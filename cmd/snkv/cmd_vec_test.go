package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGoldenVec creates an index, puts, reads, searches (by a vector, a
// file, stdin and another key, with filters), deletes and drops, and the
// usage errors.
func TestGoldenVec(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "vec.db")
	qfile := filepath.Join(dir, "q.json")
	require.NoError(t, os.WriteFile(qfile, []byte("[0.9, 0.1, 0]"), 0o600))
	runGolden(t, path, []step{
		{name: "vec-create", args: "vec create FILE docs --dim 3 --metric cosine --create"},
		{name: "vec-create-again", args: "vec create FILE docs --dim 3", code: 1},
		{name: "vec-put-a", args: "vec put FILE docs a --vector [1,0,0] --meta lang=en --value hello"},
		{name: "vec-put-b", args: "vec put FILE docs b --vector [0,1,0] --meta lang=fr --ttl 1h"},
		{name: "vec-put-c", args: "vec put FILE docs c --vector-file - --meta lang=en", stdin: "[0.7, 0.7, 0]"},
		{name: "vec-put-bad-dim", args: "vec put FILE docs d --vector [1,0]", code: 2},
		{name: "vec-put-zero", args: "vec put FILE docs d --vector [0,0,0]", code: 2},
		{name: "vec-put-two-inputs", args: "vec put FILE docs d --vector [1,0,0] --vector-file QJSON", code: 2},
		{name: "vec-ls", args: "vec ls FILE"},
		{name: "vec-get", args: "vec get FILE docs a b"},
		{name: "vec-get-missing", args: "vec get FILE docs zz", code: 3},
		{name: "vec-search", args: "vec search FILE docs --vector [1,0.1,0]"},
		{name: "vec-search-file", args: "vec search FILE docs --vector-file QJSON -k 2 --json"},
		{name: "vec-search-like", args: "vec search FILE docs --like c --where lang=en --json --values"},
		{name: "vec-search-prefix", args: "vec search FILE docs --vector [0,1,0] --prefix b"},
		{name: "vec-search-missing-index", args: "vec search FILE nope --vector [1,0,0]", code: 3},
		{name: "vec-check", args: "vec check FILE"},
		{name: "vec-del", args: "vec del FILE docs a"},
		{name: "vec-del-again", args: "vec del FILE docs a", code: 3},
		{name: "vec-stats", args: "vec stats FILE docs --json"},
		{name: "vec-drop", args: "vec drop FILE docs"},
		{name: "vec-ls-empty", args: "vec ls FILE"},
		{name: "vec-unknown", args: "vec srch FILE", code: 2},
	}, "QJSON", qfile)
}

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

// TestGoldenVecBadInput: vec put takes TTLs as every other command does
// (days; under a millisecond, negative or empty: exit code 2, where 1ns
// stored a vector that expired at once and -5s was exit code 1), and
// --expire-at; --hex and --base64 decode --value too; search refuses -k
// under 1, a negative --ef or --max-distance (they were taken as the
// defaults), and shows values in a table with --values (it showed none);
// create refuses a --dim out of range with exit code 2; get and del of
// several keys go through all of them and name the missing ones (they
// stopped at the first, and del left the later keys); get writes keys and
// values that are not UTF-8 in base64, as export does.
func TestGoldenVecBadInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vec.db")
	runGolden(t, path, []step{
		{name: "vec-bad-create", args: "vec create FILE docs --dim 2 --create"},
		{name: "vec-bad-create-dim", args: "vec create FILE big --dim 70000", code: 2},
		{name: "vec-bad-put-ttl-ns", args: "vec put FILE docs a --vector [1,0] --ttl 1ns", code: 2},
		{name: "vec-bad-put-ttl-negative", args: "vec put FILE docs a --vector [1,0] --ttl -5s", code: 2},
		{name: "vec-bad-put-ttl-empty", args: "vec put FILE docs a --vector [1,0] --ttl=", code: 2},
		{name: "vec-bad-put-ttl-days", args: "vec put FILE docs a --vector [1,0] --ttl 7d --value va"},
		{name: "vec-bad-put-expire-at", args: "vec put FILE docs b --vector [0,1] --expire-at 2031-01-01T00:00:00Z --meta lang=en"},
		{name: "vec-bad-put-expire-past", args: "vec put FILE docs b --vector [0,1] --expire-at 2001-01-01T00:00:00Z", code: 2},
		{name: "vec-bad-put-hex", args: "vec put FILE docs --hex 6162 --vector [1,1] --value 6364"},
		{name: "vec-bad-put-binary", args: "vec put FILE docs --base64 /w== --vector [1,2] --value /v8="},
		{name: "vec-bad-get-hex", args: "vec get FILE docs --hex 6162 ff"},
		{name: "vec-bad-get-some-missing", args: "vec get FILE docs a nope b gone", code: 3},
		{name: "vec-bad-search-k0", args: "vec search FILE docs --vector [1,0] -k 0", code: 2},
		{name: "vec-bad-search-ef", args: "vec search FILE docs --vector [1,0] --ef -1", code: 2},
		{name: "vec-bad-search-maxdist", args: "vec search FILE docs --vector [1,0] --max-distance -1", code: 2},
		{name: "vec-bad-search-values", args: "vec search FILE docs --vector [1,0] --values"},
		{name: "vec-bad-search-values-json", args: "vec search FILE docs --vector [1,0] --values --json -k 2"},
		{name: "vec-bad-del-some-missing", args: "vec del FILE docs nope a", code: 3},
		{name: "vec-bad-get-after-del", args: "vec get FILE docs a", code: 3},
	})
}

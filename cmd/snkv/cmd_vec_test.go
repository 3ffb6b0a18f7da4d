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
	runSteps(t, path, "QJSON", qfile)
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
	runSteps(t, path)
}

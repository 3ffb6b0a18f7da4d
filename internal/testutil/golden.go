package testutil

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// update is the -update flag of every test binary that imports testutil:
// Golden and GoldenFile rewrite their files instead of comparing with them.
// A package that imports testutil must not define a flag of that name (the
// test binary would panic at init).
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Golden compares got with the golden file testdata/golden/name of the
// package under test, or, run with -update, writes got to that file. A
// difference, or a missing file, fails the test; hint says what a
// difference means and how to accept a deliberate one (for example "a
// format change must be deliberate (docs/format.md), then go test -run
// Golden -update").
func Golden(t testing.TB, name, got, hint string) {
	t.Helper()
	GoldenFile(t, filepath.Join("testdata", "golden", name), got, hint)
}

// GoldenFile is Golden for the file at path, relative to the directory of
// the package under test (for golden files kept elsewhere than
// testdata/golden).
func GoldenFile(t testing.TB, path, got, hint string) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file %s: %s", path, hint)
	require.Equal(t, string(want), got, "differs from %s: %s", path, hint)
}

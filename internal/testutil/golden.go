package testutil

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// update is the -update flag of every test binary that imports testutil:
// Golden rewrites its files instead of comparing with them. A package that
// imports testutil must not define a flag of that name.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// Golden compares got with the golden file testdata/golden/name of the
// package under test, or, run with -update, writes got to that file. A
// difference, or a missing file, fails the test; hint says what a
// difference means and how to accept a deliberate one (for example "a
// format change must be deliberate (docs/format.md), then go test -run
// Golden -update").
func Golden(t testing.TB, name, got, hint string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file %s: %s", path, hint)
	require.Equal(t, string(want), got, "differs from %s: %s", path, hint)
}

// Updating reports whether the test binary runs with -update: a test that
// keeps golden files of its own layout (not testdata/golden) rewrites them
// instead of comparing.
func Updating() bool { return *update }

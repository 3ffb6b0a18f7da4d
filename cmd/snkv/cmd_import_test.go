package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestImport loads JSON Lines and TSV, all-or-nothing per column family
// or in batches, and refuses bad lines.
func TestImport(t *testing.T) {
	runSteps(t, fixture(t))
}

// TestImportFailureLeavesFile fails all-or-nothing imports: into a column
// family that exists, and into one the import creates, the file is left
// byte for byte as it was (a created column family used to cost a page);
// with --create, a store the import would have made is not left behind.
func TestImportFailureLeavesFile(t *testing.T) {
	bad := func(cf string) string {
		return `{"cf":"` + cf + `","key":"a","value":"1"}` + "\n" + `{"cf":"` + cf + `","key":"b","value":1}` + "\n"
	}
	path := fixture(t)
	for _, cf := range []string{"sessions", "brand-new"} {
		before, err := os.ReadFile(path)
		require.NoError(t, err)
		r := cli(t, strings.NewReader(bad(cf)), "import", path)
		require.Equal(t, 1, r.code, r.stderr)
		require.Contains(t, r.stderr, "was rolled back")
		after, err := os.ReadFile(path)
		require.NoError(t, err)
		require.True(t, bytes.Equal(before, after), "%s: the file is as it was (%d bytes, then %d)", cf, len(before), len(after))
	}

	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.db")
	r := cli(t, strings.NewReader(bad("x")), "import", fresh, "--create")
	require.Equal(t, 1, r.code, r.stderr)
	require.NoFileExists(t, fresh)
	r = cli(t, strings.NewReader(bad("x")), "import", fresh, "--create", "--format", "tsv")
	require.Equal(t, 1, r.code, r.stderr)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "no store, temporary file or -wal/-shm is left")

	// A batch committed before the failure stays, in the store created.
	r = cli(t, strings.NewReader(`{"cf":"x","key":"a","value":"1"}`+"\n"+bad("x")), "import", fresh, "--create", "--batch", "1")
	require.Equal(t, 1, r.code, r.stderr)
	r = cli(t, nil, "get", fresh, "--cf", "x", "a")
	require.Equal(t, result{"1", "", 0}, r)

	// A successful import into a new store.
	r = cli(t, strings.NewReader(`{"cf":"y","key":"k","value":"v"}`+"\n"), "import", filepath.Join(dir, "ok.db"), "--create", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "get", filepath.Join(dir, "ok.db"), "--cf", "y", "k")
	require.Equal(t, result{"v", "", 0}, r)
}

package testutil_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/stretchr/testify/require"
)

// TestLookupChild is the child of TestSQLite3Lookup: it looks the shell up
// with the PATH and CI it is given.
func TestLookupChild(t *testing.T) {
	testutil.ChildOnly(t)
	testutil.SQLite3(t)
}

// Without a sqlite3 on the PATH a test is skipped, except under CI=true,
// where it fails.
func TestSQLite3Lookup(t *testing.T) {
	empty := "PATH=" + t.TempDir()
	out, err := testutil.RunChild(context.Background(), t, "TestLookupChild", empty, "CI=")
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "--- SKIP: TestLookupChild")
	require.Contains(t, string(out), "sqlite3 is not on the PATH")

	out, err = testutil.RunChild(context.Background(), t, "TestLookupChild", empty, "CI=true")
	require.Error(t, err, "%s", out)
	require.Contains(t, string(out), "--- FAIL: TestLookupChild")
	require.Contains(t, string(out), "required under CI=true")
}

// Shell returns the shell's output lines and fails on an error; RunShell
// returns the error and what the shell wrote to stderr.
func TestShell(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	require.Nil(t, testutil.Shell(t, "CREATE TABLE t(a); INSERT INTO t VALUES (1), (2);", "-batch", "-bail", path))
	require.Equal(t, []string{"1", "2"}, testutil.Shell(t, "SELECT a FROM t ORDER BY a;", "-batch", path))
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Positive(t, st.Size())

	out, errs, err := testutil.RunShell(t, "SELECT nosuch FROM t;", "-batch", "-bail", path)
	require.Error(t, err)
	require.Empty(t, out)
	require.Contains(t, errs, "nosuch")
}

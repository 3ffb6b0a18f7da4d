package testutil_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/stretchr/testify/require"
)

// ListDir lists files and directories by name, sorted; an empty
// directory has none.
func TestListDir(t *testing.T) {
	dir := t.TempDir()
	require.Empty(t, testutil.ListDir(t, dir))
	for _, n := range []string{"b.db-wal", "a.db", "b.db"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o600))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o700))
	require.Equal(t, []string{"a.db", "b.db", "b.db-wal", "sub"}, testutil.ListDir(t, dir))
}

package testutil_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/stretchr/testify/require"
)

// Golden passes on the file's own text; -update writes the file, under
// testdata/golden of the directory the test runs in.
func TestGolden(t *testing.T) {
	testutil.Golden(t, "sample.txt", "a golden line\n", "testutil's own sample")

	t.Chdir(t.TempDir())
	u := flag.Lookup("update")
	require.NotNil(t, u, "testutil registers -update")
	require.NoError(t, u.Value.Set("true"))
	t.Cleanup(func() { _ = u.Value.Set("false") })
	testutil.Golden(t, "new/one.txt", "written\n", "")
	b, err := os.ReadFile(filepath.Join("testdata", "golden", "new", "one.txt"))
	require.NoError(t, err)
	require.Equal(t, "written\n", string(b))
}

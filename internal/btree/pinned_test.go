package btree

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The module pins the versions the fast path was verified against: a
// change of modernc.org/sqlite or modernc.org/libc in go.mod must come with
// the steps of docs/upgrading.md (and the new versions here).
func TestPinnedVersionsMatchGoMod(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	require.NoError(t, err)
	for _, want := range []string{"modernc.org/sqlite " + PinnedSQLiteModule, "modernc.org/libc " + PinnedLibcModule} {
		require.True(t, strings.Contains(string(mod), want),
			"go.mod does not require %s: the fast path below SQL was verified against that version only; "+
				"follow docs/upgrading.md to move to another (and update the Pinned constants in internal/btree)", want)
	}
	require.NoError(t, Compatible(), "the test binary links other SQLite versions than the pinned ones: see docs/upgrading.md")
}

//go:build unix

package timelog_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

// The writer's lock file beside the store gets the store's
// Options.FileMode, like every other file made for the store.
func TestLockFileMode(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	for _, mode := range []os.FileMode{0, 0o640} {
		dir := t.TempDir()
		db, err := kvstore.Open(filepath.Join(dir, "s.db"), kvstore.Options{FileMode: mode})
		require.NoError(t, err)
		l, err := timelog.Open(context.Background(), db, "w", timelog.Options{})
		require.NoError(t, err)
		want := mode
		if want == 0 {
			want = kvstore.DefaultFileMode
		}
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		locks := 0
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".lock") {
				st, err := os.Stat(filepath.Join(dir, e.Name()))
				require.NoError(t, err)
				require.Equal(t, want, st.Mode().Perm(), e.Name())
				locks++
			}
		}
		require.Equal(t, 1, locks)
		require.NoError(t, l.Close())
		require.NoError(t, db.Close())
	}
}

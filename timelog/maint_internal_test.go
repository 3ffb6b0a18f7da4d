package timelog

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// StartMaintenance racing Close never leaves the background goroutine
// running on a closed log: its check of the log and its start are one step
// under the log's lock, so either Close stops what it started or it finds
// the log closed.
func TestStartMaintenanceRacingClose(t *testing.T) {
	db, err := kvstore.Open(filepath.Join(t.TempDir(), "s.db"), kvstore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	rounds := 300
	if testing.Short() {
		rounds = 100
	}
	for i := range rounds {
		l, err := Open(context.Background(), db, "m", Options{})
		require.NoError(t, err)
		l.StopMaintenance()
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := l.StartMaintenance(); err != nil {
				require.True(t, errors.Is(err, ErrClosed), "round %d: %v", i, err)
			}
		}()
		go func() {
			defer wg.Done()
			require.NoError(t, l.Close())
		}()
		wg.Wait()
		require.False(t, l.maint.running(), "round %d: maintenance runs on a closed log", i)
	}
}

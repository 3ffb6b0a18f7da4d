package tests

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/kvstore"
)

// A reader waiting on a quiet store opened with ReadHold -1 (as a LiteFS
// replica's should be) waits on the WAL index's header, as with held
// reads, and does not read the log at every poll: under 2.5% of a core
// (measured 0.8-1.1%, with -race too; reading the log at every poll, as it
// did when such a store did not map the index, 3.4-3.7%). Long only: it
// measures CPU time.
func TestChangeFeedIdleTailWithoutReadHold(t *testing.T) {
	if testing.Short() {
		t.Skip("measures CPU time over seconds")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "idle.db")
	w, err := kvstore.Open(path, kvstore.Options{PurgeInterval: -1})
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, changefeed.Enable(ctx, w, kvstore.DefaultColumnFamily, changefeed.Options{}))
	require.NoError(t, w.Put([]byte("k"), []byte("v")))

	// Another handle on the file, as another process: no in-process wake-up.
	r, err := kvstore.Open(path, kvstore.Options{ReadHold: -1, PurgeInterval: -1})
	require.NoError(t, err)
	defer r.Close()
	reader, err := changefeed.NewReader(ctx, r, changefeed.Position{}, changefeed.ReaderOptions{})
	require.NoError(t, err)
	defer reader.Close()
	c, err := reader.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, "k", string(c.Key))

	share := idleTailShare(t, reader, 3*time.Second)
	t.Logf("an idle tail with ReadHold -1 used %.2f%% of a core", 100*share)
	require.Less(t, share, 0.025)

	// And it still sees a commit of the other handle.
	require.NoError(t, w.Put([]byte("k2"), []byte("v")))
	nctx, ncancel := context.WithTimeout(ctx, 5*time.Second)
	defer ncancel()
	c, err = reader.Next(nctx)
	require.NoError(t, err)
	require.Equal(t, "k2", string(c.Key))
}

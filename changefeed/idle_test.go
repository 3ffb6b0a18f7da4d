package changefeed_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/kvstore"
)

// TestIdleReaderSeesOtherHandleCommits: a reader that has waited past its
// poll series (it then watches the WAL and looks at the commit mark only
// every IdlePolls×Poll) still sees, well before that safety look, the
// commits of another handle on the file (as another process: its commit
// hook does not wake this reader), spell after spell.
func TestIdleReaderSeesOtherHandleCommits(t *testing.T) {
	s, _, path := openStore(t)
	ctx := context.Background()
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{}))
	other, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	defer other.Close()

	const poll = 10 * time.Millisecond // safety look every second
	r, err := changefeed.NewReader(ctx, s, changefeed.Position{}, changefeed.ReaderOptions{Poll: poll})
	require.NoError(t, err)
	defer r.Close()
	for i := range 3 {
		got := make(chan changefeed.Change, 1)
		errc := make(chan error, 1)
		go func() {
			c, err := r.Next(ctx)
			errc <- err
			got <- c
		}()
		time.Sleep(300 * time.Millisecond) // past both series (2×70 ms)
		key := fmt.Appendf(nil, "k%d", i)
		require.NoError(t, other.Put(key, []byte("v")))
		t0 := time.Now()
		select {
		case err := <-errc:
			require.NoError(t, err)
			require.Equal(t, key, (<-got).Key)
			require.Less(t, time.Since(t0), 600*time.Millisecond, "seen by the watch, not the safety look")
		case <-time.After(10 * time.Second):
			t.Fatal("the idle reader did not see the commit")
		}
	}
}

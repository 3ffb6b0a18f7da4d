package changefeed_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/ttl"
)

// A Reader reading kept values in a loop while the store is re-keyed,
// then decrypted, gets every value back every time: a page of the log is
// read in one snapshot, whose values are sealed under that snapshot's
// keys, never an ErrAuth from opening them with keys changed since.
func TestReaderAcrossRekey(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "rekey.db")
	s, err := kvstore.Open(path, kvstore.Options{Encryption: encrypted("one"), Clock: ttl.NewManualClock(t0)})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{KeepValues: true}))
	const n = 300
	require.NoError(t, s.Update(ctx, func(tx *kvstore.Tx) error {
		for i := range n {
			if err := tx.Put(fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "value %d", i)); err != nil {
				return err
			}
		}
		return nil
	}))

	var stop atomic.Bool
	var wg sync.WaitGroup
	var readErr error
	var rounds int
	wg.Go(func() {
		for !stop.Load() {
			r, err := changefeed.NewReader(ctx, s, changefeed.Position{}, changefeed.ReaderOptions{Batch: 16})
			if err != nil {
				readErr = err
				return
			}
			got := 0
			for got < n {
				chs, err := r.Read(ctx)
				if err != nil {
					readErr = fmt.Errorf("round %d, after %d changes: %w", rounds, got, err)
					return
				}
				for _, c := range chs {
					if string(c.Value) != fmt.Sprintf("value %d", got) {
						readErr = fmt.Errorf("change %d: value %q", got, c.Value)
						return
					}
					got++
				}
			}
			rounds++
		}
	})
	var rekeyErr error
	for i := 0; i < 6 && rekeyErr == nil && readErr == nil; i++ {
		rekeyErr = s.Rekey(ctx, *encrypted(fmt.Sprint("pass", i)))
	}
	if rekeyErr == nil {
		rekeyErr = s.RemoveEncryption(ctx)
	}
	stop.Store(true)
	wg.Wait()
	require.NoError(t, rekeyErr)
	require.NoError(t, readErr)
	require.Positive(t, rounds)
}

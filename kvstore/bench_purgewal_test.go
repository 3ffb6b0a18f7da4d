package kvstore_test

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// A purge in batches is one run of commits for the automatic checkpoints:
// no pass chases its batches, but its WAL stays bounded, a fixed number
// of thresholds past the WAL it began on (32: internal/engine's
// holdBound), however many batches it commits. The WAL file never
// shrinks here, so its largest size is its size at the end.
func TestPurgeKeepsTheWALBounded(t *testing.T) {
	const (
		threshold = 50 // pages
		keys      = 20_000
		holdBound = 32
	)
	ctx := context.Background()
	clk := kvstore.NewManualClock(harnessT0)
	path := filepath.Join(t.TempDir(), "w.db")
	s, err := kvstore.Open(path, kvstore.Options{Clock: clk, WALAutoCheckpoint: threshold})
	require.NoError(t, err)
	defer s.Close()
	value := make([]byte, 100)
	require.NoError(t, s.Update(ctx, func(tx *kvstore.Tx) error {
		for i := range keys {
			k := binary.BigEndian.AppendUint64(nil, uint64(i)*0x9e3779b97f4a7c15) // scattered keys
			if err := tx.PutExpireAt(k, value, harnessT0.Add(time.Duration(1+i%2)*time.Hour)); err != nil {
				return err
			}
		}
		return nil
	}))
	// Copy the load and restart the WAL, so that the purge starts on an
	// empty one.
	_, err = s.Checkpoint(ctx, kvstore.CheckpointTruncate)
	require.NoError(t, err)
	clk.Set(harnessT0.Add(90 * time.Minute))

	var top atomic.Int64
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			if fi, err := os.Stat(path + "-wal"); err == nil {
				top.Store(max(top.Load(), fi.Size()))
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	n, err := s.PurgeExpired(ctx)
	close(stop)
	<-watched
	require.NoError(t, err)
	require.Equal(t, keys/2, n)

	hdr := make([]byte, 32)
	f, err := os.Open(path + "-wal")
	require.NoError(t, err)
	_, err = f.ReadAt(hdr, 0)
	require.NoError(t, f.Close())
	require.NoError(t, err)
	frame := int64(binary.BigEndian.Uint32(hdr[8:12])) + 24
	fi, err := os.Stat(path + "-wal")
	require.NoError(t, err)
	frames := (max(top.Load(), fi.Size()) - 32) / frame
	t.Logf("the purge's WAL reached %d frames", frames)
	// A batch of 256 scattered keys rewrites fewer than 2,000 pages.
	require.Less(t, frames, int64(holdBound*threshold+2000), "the WAL outgrew its bound during the purge")
	require.Greater(t, frames, int64(threshold), "the purge wrote less than a threshold of frames")
	live, err := s.Count()
	require.NoError(t, err)
	require.Equal(t, int64(keys/2), live)
}

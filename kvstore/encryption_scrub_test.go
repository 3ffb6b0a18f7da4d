package kvstore_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// markerStore makes a store in the clear of n values that each hold a
// marker, and returns it open with opts.
func markerStore(t *testing.T, n int, opts kvstore.Options) (*kvstore.Store, string) {
	t.Helper()
	path := tempPath(t)
	s := openAt(t, path, opts)
	require.NoError(t, s.Update(context.Background(), func(tx *kvstore.Tx) error {
		for i := range n {
			if err := tx.Put(fmt.Appendf(nil, "k%05d", i), fmt.Appendf(nil, "PLAINTEXT-MARKER-%05d", i)); err != nil {
				return err
			}
		}
		return nil
	}))
	return s, path
}

// markersLeft counts the markers in the store's main file and WAL.
func markersLeft(t *testing.T, path string) int {
	t.Helper()
	n := 0
	for _, p := range []string{path, path + "-wal"} {
		if b, err := os.ReadFile(p); err == nil {
			n += bytes.Count(b, []byte("PLAINTEXT-MARKER"))
		}
	}
	return n
}

// openCursor opens a cursor on the default column family and positions
// it: its snapshot holds the WAL's frames from then on.
func openCursor(t *testing.T, s *kvstore.Store) *kvstore.Cursor {
	t.Helper()
	c, err := s.Default().Cursor(kvstore.IterOptions{})
	require.NoError(t, err)
	require.True(t, c.First())
	return c
}

// Encrypt never returns nil while a value in the clear is still in the
// file: with a reader holding the WAL it says so (ErrScrubPending), and
// FinishConversion clears it once the reader is gone.
func TestEncryptNeverReturnsNilWithPlaintextInTheWAL(t *testing.T) {
	skipSealedSuite(t)
	s, path := markerStore(t, 3000, kvstore.Options{BusyTimeout: 300 * time.Millisecond, UpgradeBatch: 200})
	cur := openCursor(t, s)
	err := s.Encrypt(context.Background(), *rawKey(1))
	if err == nil {
		require.Zero(t, markersLeft(t, path), "Encrypt returned nil with values in the clear in the file")
	}
	require.ErrorIs(t, err, kvstore.ErrScrubPending)
	require.ErrorIs(t, err, kvstore.ErrBusy)
	require.True(t, s.Encrypted(), "the conversion itself is done")
	require.Positive(t, markersLeft(t, path), "the reader's snapshot still needs them")
	require.NoError(t, cur.Close())
	require.NoError(t, s.FinishConversion(context.Background()))
	require.Zero(t, markersLeft(t, path))
	require.NoError(t, s.FinishConversion(context.Background()), "nothing left to do")
	require.NoError(t, s.Close())
	s = openAt(t, path, kvstore.Options{Encryption: rawKey(1)})
	require.Len(t, contents(t, s.Default()), 3000)
}

// With a reader that ends while it waits, Encrypt finishes and returns nil
// with no value in the clear left.
func TestEncryptWaitsForAReaderToEnd(t *testing.T) {
	skipSealedSuite(t)
	s, path := markerStore(t, 3000, kvstore.Options{BusyTimeout: 5 * time.Second, UpgradeBatch: 200})
	cur := openCursor(t, s)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for s.Encrypted() == false {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		_ = cur.Close()
	}()
	require.NoError(t, s.Encrypt(context.Background(), *rawKey(1)))
	<-done
	require.Zero(t, markersLeft(t, path))
}

// The end of a conversion never stalls writers while a reader is open: the
// TRUNCATE checkpoint that empties the WAL does not wait for readers while
// it holds the writer.
func TestConversionEndDoesNotStallWriters(t *testing.T) {
	skipSealedSuite(t)
	const busy = 2 * time.Second
	s, _ := markerStore(t, 2000, kvstore.Options{BusyTimeout: busy, UpgradeBatch: 200})
	other, err := s.CreateColumnFamily("writes")
	require.NoError(t, err)
	cur := openCursor(t, s)
	defer cur.Close()

	var worst time.Duration
	var writeErr error
	writer := testutil.NewLoops()
	writer.Go(func(i int) bool {
		start := time.Now()
		if err := other.Put(fmt.Appendf(nil, "w%06d", i), []byte("v")); err != nil && writeErr == nil {
			writeErr = err
		}
		worst = max(worst, time.Since(start))
		time.Sleep(time.Millisecond)
		return true
	})
	err = s.Encrypt(context.Background(), *rawKey(1))
	writer.Stop()
	require.NoError(t, writeErr)
	require.Less(t, worst, busy/4, "a write waited %v (busy timeout %v)", worst, busy)
	require.ErrorIs(t, err, kvstore.ErrScrubPending, "the cursor is still open")
}

// scrubRecorded reads, as another tool would, whether the store records a
// scrub still to run.
func scrubRecorded(t *testing.T, path string) bool {
	t.Helper()
	db := rawDB(t, "file:"+path+"?mode=ro")
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM __snkv_meta WHERE name = 'encryption scrub'`).Scan(&n))
	return n > 0
}

// A scrub that a reader holds up does not hold up the next conversion: a
// re-key replaces it with its own, and removing the encryption makes it
// moot (it does not scrub).
func TestPendingScrubDoesNotBlockTheNextConversion(t *testing.T) {
	skipSealedSuite(t)
	s, path := markerStore(t, 500, kvstore.Options{BusyTimeout: 100 * time.Millisecond, UpgradeBatch: 100})
	cur := openCursor(t, s)
	require.ErrorIs(t, s.Encrypt(context.Background(), *rawKey(1)), kvstore.ErrScrubPending)
	require.True(t, scrubRecorded(t, path))
	require.NoError(t, s.RemoveEncryption(context.Background()), "the cursor still holds the WAL")
	require.False(t, s.Encrypted())
	require.False(t, scrubRecorded(t, path))
	require.NoError(t, cur.Close())
	require.NoError(t, s.FinishConversion(context.Background()))

	cur = openCursor(t, s)
	require.ErrorIs(t, s.Encrypt(context.Background(), *rawKey(2)), kvstore.ErrScrubPending)
	require.NoError(t, cur.Close())
	require.NoError(t, s.Rekey(context.Background(), *rawKey(3)), "its own scrub clears what the encryption's left")
	require.False(t, scrubRecorded(t, path))
	require.Zero(t, markersLeft(t, path))
}

// Steady short reads from many goroutines (no cursor, no View, no other
// process) never keep a conversion's scrub from emptying the WAL: the
// store's own readers hold read transactions between reads, and those
// begun before the scrub must end at their next read instead of being
// reused, so Encrypt returns nil, with no value in the clear left, while
// the reads go on and stay correct.
func TestEncryptFinishesUnderSteadyReads(t *testing.T) {
	skipSealedSuite(t)
	s, path := markerStore(t, 3000, kvstore.Options{BusyTimeout: 2 * time.Second, UpgradeBatch: 500})
	readers := testutil.NewLoops()
	var reads, bad atomicCounter
	for g := range 16 {
		readers.Go(func(n int) bool {
			i := g + 16*n
			k := fmt.Appendf(nil, "k%05d", i%3000)
			v, err := s.Get(k)
			if err != nil || string(v) != fmt.Sprintf("PLAINTEXT-MARKER-%05d", i%3000) {
				bad.add()
			}
			reads.add()
			return true
		})
	}
	for reads.load() < 1000 {
		time.Sleep(time.Millisecond)
	}
	err := s.Encrypt(context.Background(), *rawKey(1))
	afterEncrypt := reads.load()
	time.Sleep(20 * time.Millisecond)
	readers.Stop()
	require.NoError(t, err, "the scrub did not finish while reads went on")
	require.Zero(t, markersLeft(t, path), "values in the clear left in the file")
	require.Zero(t, bad.load(), "a read failed or returned a wrong value during the conversion")
	require.Greater(t, reads.load(), afterEncrypt, "reads went on after the conversion")
}

type atomicCounter struct{ n atomic.Int64 }

func (c *atomicCounter) add()        { c.n.Add(1) }
func (c *atomicCounter) load() int64 { return c.n.Load() }

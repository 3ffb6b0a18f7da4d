//go:build !windows

package tests

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// haltByte is the byte of LiteFS's "<db>-lock" file whose POSIX write lock
// is its halt lock: while a replica holds it, the primary takes no writes
// and the replica may write, each commit being sent to the primary.
const haltByte = 72

func haltLock(f *os.File, typ int16) error {
	cmd := syscall.F_SETLKW
	if typ == syscall.F_UNLCK {
		cmd = syscall.F_SETLK
	}
	return syscall.FcntlFlock(f.Fd(), cmd, &syscall.Flock_t{Type: typ, Whence: 0, Start: haltByte, Len: 1})
}

// nextStep commits the step after the last one in the store, read in the
// same write transaction: with two writers (the primary and a replica
// under the halt lock) the steps stay a gap-free sequence only if each
// write transaction sees every step committed before it.
func (s *liteStore) nextStep(ctx context.Context) (int, error) {
	var i int
	err := s.db.Update(ctx, func(tx *kvstore.Tx) error {
		n, err := tx.Count()
		if err != nil {
			return err
		}
		i = int(n) + 1
		return s.writeIn(ctx, tx, i)
	})
	return i, err
}

// TestLiteFSHaltLockWrites tries LiteFS's write forwarding: a writer on the
// replica takes the halt lock around each transaction while the primary's
// writer goes on, both writing the next step of one sequence, and a
// read-only store on the replica checks consistent prefixes as in
// TestLiteFSReplica.
//
// It is not part of the suite: on LiteFS v0.5.14 the subtests with a
// reader fail in most runs (docs/replication.md, "What does not work"):
// taking the halt lock times out after LiteFS's 10 s with EIO, stalling the
// primary's writes meanwhile, and the replica's read-only store fails a read
// with SQLITE_PROTOCOL or SQLITE_IOERR_IN_PAGE. Without the reader it has
// held. It stays as the reproduction:
//
//	SNKV_LITEFS_HALT=1 go test -run TestLiteFSHaltLockWrites -count 3 -v ./tests/
func TestLiteFSHaltLockWrites(t *testing.T) {
	if os.Getenv("SNKV_LITEFS_HALT") != "1" {
		t.Skip("write forwarding through LiteFS's halt lock does not hold (docs/replication.md): set SNKV_LITEFS_HALT=1 to reproduce")
	}
	t.Run("no reader", func(t *testing.T) { testLiteFSHaltLockWrites(t, false, 0) })
	for _, hold := range []time.Duration{0, -1} {
		t.Run(fmt.Sprintf("reader ReadHold %v", hold), func(t *testing.T) { testLiteFSHaltLockWrites(t, true, hold) })
	}
}

func testLiteFSHaltLockWrites(t *testing.T, reader bool, readHold time.Duration) {
	c := startLiteCluster(t)
	ctx := context.Background()
	p := openLiteStore(t, c.primary.path(liteDB), kvstore.Options{})
	defer p.db.Close()
	_, err := p.nextStep(ctx)
	require.NoError(t, err)
	pos, _, err := readPos(c.primary, liteDB)
	require.NoError(t, err)
	waitPos(t, c.replica, liteDB, pos, liteConvergeBound)

	lockf, err := os.OpenFile(c.replica.path(liteDB)+"-lock", os.O_RDWR, 0)
	require.NoError(t, err)
	defer lockf.Close()
	rw := openLiteStore(t, c.replica.path(liteDB), kvstore.Options{ReadHold: -1})
	// A long-lived read-only store on the replica checks every step as in
	// TestLiteFSReplica.
	r := openLiteStore(t, c.replica.path(liteDB), kvstore.Options{ReadOnly: true, ReadHold: readHold})
	defer r.db.Close()

	var pAcks, rAcks atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var (
		mu      sync.Mutex
		samples []lagSample
	)
	wg.Add(1)
	if reader {
		go readLoop(t, r, nil, liteScanPause, stop, &wg, &mu, &samples)
	} else {
		wg.Done()
	}
	writer := testutil.NewLoops()
	writer.Go(func(int) bool {
		if _, err := p.nextStep(ctx); err != nil {
			t.Logf("primary write: %v", err)
		} else {
			pAcks.Add(1)
		}
		return true
	})
	stopAll := sync.OnceFunc(func() { close(stop); wg.Wait(); writer.Stop() })
	defer stopAll() // also when a require below ends the test
	var lat []time.Duration
	start := time.Now()
	for time.Since(start) < 3*time.Second {
		t0 := time.Now()
		if err := haltLock(lockf, syscall.F_WRLCK); err != nil {
			t.Fatalf("taking the halt lock on the replica (after %v): %v\nreplica's log:\n%s", time.Since(t0).Round(time.Millisecond), err, c.replica.log())
		}
		t1 := time.Now()
		_, err := rw.nextStep(ctx)
		t2 := time.Now()
		require.NoError(t, haltLock(lockf, syscall.F_UNLCK))
		if err != nil {
			t.Logf("replica write under the halt lock: %v", err)
		} else {
			rAcks.Add(1)
		}
		lat = append(lat, time.Since(t0))
		t.Logf("halt lock %v, write %v, release %v", t1.Sub(t0).Round(time.Microsecond), t2.Sub(t1).Round(time.Microsecond), time.Since(t2).Round(time.Microsecond))
		time.Sleep(20 * time.Millisecond)
	}
	stopAll()
	require.NoError(t, rw.db.Close(), "closing the replica's read-write store")
	mu.Lock()
	t.Logf("the read-only store made %d consistent scans meanwhile", len(samples))
	mu.Unlock()
	lm, lw := summarizeLag(lagFrom(lat))
	t.Logf("a write through the replica (halt lock, transaction, release): median %v, worst %v", lm.Round(time.Millisecond), lw.Round(time.Millisecond))
	total := int(pAcks.Load() + rAcks.Load() + 1)
	t.Logf("acknowledged: %d on the primary, %d through the replica", pAcks.Load(), rAcks.Load())
	n, err := p.check(ctx)
	require.NoError(t, err)
	require.Equal(t, total, n, "the primary holds every acknowledged step once")
	pos, _, err = readPos(c.primary, liteDB)
	require.NoError(t, err)
	waitPos(t, c.replica, liteDB, pos, liteConvergeBound)
	for {
		rn, err := r.check(ctx)
		require.NoError(t, err)
		if rn == total {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, r.db.IntegrityCheck(ctx))
	require.NoError(t, p.db.IntegrityCheck(ctx))
}

// lagFrom wraps durations as lag samples for summarizeLag.
func lagFrom(ds []time.Duration) []lagSample {
	s := make([]lagSample, len(ds))
	for i, d := range ds {
		s[i].stale = d
	}
	return s
}

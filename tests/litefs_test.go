package tests

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// liteConvergeBound is how long a replica may take to hold every
// acknowledged write once the writes stop. Measured on the 2-core
// development machine after 3–4 s of unthrottled writes, over 25 runs with
// several replica settings (docs/replication.md): 2 ms–1.5 s; the bound
// leaves room for a loaded CI machine.
const liteConvergeBound = 30 * time.Second

// liteWriteFor is how long the primary writes while the replica reads.
const liteWriteFor = 4 * time.Second

// liteScanPause is the pause between two scans of the replica's reader.
// A reader that never pauses keeps the database locked on the replica
// almost all the time and LiteFS applies nothing until the reads stop
// (docs/replication.md).
const liteScanPause = 10 * time.Millisecond

// liteRun is what runLiteWrites measured.
type liteRun struct {
	steps, scans, maxSeen int
	writing               time.Duration
	median, worst         time.Duration
}

func (s liteRun) String() string {
	return fmt.Sprintf("primary: %d steps (%d keys) in %v, %.0f steps/s; replica: %d consistent scans, saw at most %d steps while writing; staleness median %v, worst %v",
		s.steps, s.steps*2+batchKeys*(s.steps/batchEvery), s.writing.Round(time.Millisecond),
		float64(s.steps)/s.writing.Seconds(), s.scans, s.maxSeen, s.median.Round(time.Millisecond), s.worst.Round(time.Millisecond))
}

// runLiteWrites writes steps from+1 on through p for about d while
// readers goroutines check r in a loop, pausing between scans, and fails the
// test if a scan is not a consistent prefix. It returns the last step
// written.
func runLiteWrites(t testing.TB, p, r *liteStore, acks *ackLog, from int, d, pause time.Duration, readers int) (int, liteRun) {
	t.Helper()
	ctx := context.Background()
	var (
		mu      sync.Mutex
		samples []lagSample
		stop    = make(chan struct{})
		wg      sync.WaitGroup
	)
	for range readers {
		wg.Add(1)
		go readLoop(t, r, acks, pause, stop, &wg, &mu, &samples)
	}
	start := time.Now()
	i := from
	for time.Since(start) < d {
		i++
		if err := p.write(ctx, i); err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("step %d on the primary: %v", i, err)
		}
		acks.ack(i)
	}
	st := liteRun{steps: i - from, writing: time.Since(start)}
	close(stop)
	wg.Wait()
	require.NotEmpty(t, samples, "the replica scanned while the primary wrote")
	st.scans = len(samples)
	st.median, st.worst = summarizeLag(samples)
	for _, s := range samples {
		st.maxSeen = max(st.maxSeen, s.seen)
	}
	return i, st
}

// readLoop is one reader of runLiteWrites: each scan must be a consistent
// prefix and, with one sequential writer whose acknowledgements acks
// records, hold nothing past the one step in flight. With acks nil (several
// writers) only consistency is checked.
func readLoop(t testing.TB, r *liteStore, acks *ackLog, pause time.Duration, stop chan struct{}, wg *sync.WaitGroup, mu *sync.Mutex, samples *[]lagSample) {
	defer wg.Done()
	for {
		select {
		case <-stop:
			return
		case <-time.After(pause):
		}
		begin := time.Now()
		var acked int
		if acks != nil {
			acked = int(acks.acked.Load())
		}
		n, err := r.check(context.Background())
		if err != nil {
			t.Errorf("replica scan while writing: %v", err)
			return
		}
		s := lagSample{seen: n, acked: acked}
		if acks != nil {
			if after := int(acks.acked.Load()); n > after+1 {
				t.Errorf("replica scan saw %d steps, only %d acknowledged and one in flight", n, after)
				return
			}
			if n < s.acked {
				s.stale = begin.Sub(acks.when(n + 1))
			}
		}
		mu.Lock()
		*samples = append(*samples, s)
		mu.Unlock()
	}
}

// TestLiteFSReplica runs a LiteFS primary and replica and checks what a
// read-only store on the replica sees while the primary writes, after it
// stops, and when something tries to write through the replica.
func TestLiteFSReplica(t *testing.T) {
	c := startLiteCluster(t)
	ctx := context.Background()

	p := openLiteStore(t, c.primary.path(liteDB), kvstore.Options{})
	defer p.db.Close()
	require.NoError(t, p.write(ctx, 1))
	acks := &ackLog{}
	acks.ack(1)
	pos, ok, err := readPos(c.primary, liteDB)
	require.NoError(t, err)
	require.True(t, ok, "the primary publishes the store's position")
	waitPos(t, c.replica, liteDB, pos, liteConvergeBound)

	// One store on the replica stays open through every phase.
	r := openLiteStore(t, c.replica.path(liteDB), kvstore.Options{ReadOnly: true})
	defer r.db.Close()

	// Phase 1: the primary writes as fast as it can; the replica's store
	// scans in a loop, and each scan must be a consistent prefix.
	written, st := runLiteWrites(t, p, r, acks, 1, liteWriteFor, liteScanPause, 1)
	t.Logf("%s", st)

	// Phase 2: the writes have stopped; the long-lived store, and a store
	// opened now, hold every acknowledged write within the bound.
	stopped := time.Now()
	pos, _, err = readPos(c.primary, liteDB)
	require.NoError(t, err)
	applied := waitPos(t, c.replica, liteDB, pos, liteConvergeBound)
	for {
		n, err := r.check(ctx)
		require.NoError(t, err)
		if n == written {
			break
		}
		require.Less(t, time.Since(stopped), liteConvergeBound, "the replica's store saw %d of %d steps", n, written)
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("converged: the replica applied the last transaction %v after the writes stopped; its store saw every step after %v",
		applied.Round(time.Millisecond), time.Since(stopped).Round(time.Millisecond))
	fresh := openLiteStore(t, c.replica.path(liteDB), kvstore.Options{ReadOnly: true})
	n, err := fresh.check(ctx)
	require.NoError(t, err)
	require.Equal(t, written, n)
	require.NoError(t, fresh.db.IntegrityCheck(ctx))
	require.NoError(t, fresh.db.Close())

	// Read your write: after a commit on the primary, wait for the
	// replica's position to reach the primary's, then read.
	written++
	require.NoError(t, p.write(ctx, written))
	pos, _, err = readPos(c.primary, liteDB)
	require.NoError(t, err)
	waitPos(t, c.replica, liteDB, pos, liteConvergeBound)
	v, err := r.db.Get(wKey(written))
	require.NoError(t, err, "a write is readable on the replica once its position is reached")
	require.Equal(t, stepVal(written), v)

	t.Run("writes refused", func(t *testing.T) { testLiteFSRefusesWrites(t, c, p, r, written) })
	written++ // the subtest wrote one more step, to see replication go on
	t.Run("expiry", func(t *testing.T) { testLiteFSExpiry(t, c, r) })
	t.Run("time-series log", func(t *testing.T) { testLiteFSTimelog(t, c, p, r) })
	t.Run("cli", func(t *testing.T) { testLiteFSCLI(t, c, p, written) })
}

// testLiteFSRefusesWrites tries every kind of write through the replica:
// each fails, and neither the replica nor the primary changes.
func testLiteFSRefusesWrites(t *testing.T, c *liteCluster, p, r *liteStore, written int) {
	ctx := context.Background()
	before, _, err := readPos(c.replica, liteDB)
	require.NoError(t, err)
	var b kvstore.Batch
	b.Put([]byte("x"), []byte("y"))
	for name, write := range map[string]func() error{
		"Put":                func() error { return r.db.Put([]byte("x"), []byte("y")) },
		"PutTTL":             func() error { return r.ttlCF.PutTTL([]byte("x"), []byte("y"), time.Hour) },
		"Delete":             func() error { return r.db.Delete(wKey(1)) },
		"Expire":             func() error { return r.ttlCF.Expire(tKey(1), time.Minute) },
		"Apply":              func() error { return r.batchCF.Apply(ctx, &b) },
		"Update":             func() error { return r.db.Update(ctx, func(tx *kvstore.Tx) error { return tx.Put([]byte("x"), nil) }) },
		"CreateColumnFamily": func() error { _, err := r.db.CreateColumnFamily("new"); return err },
		"PurgeExpiredAll":    func() error { _, err := r.db.PurgeExpiredAll(ctx); return err },
	} {
		err := write()
		require.ErrorIs(t, err, kvstore.ErrReadOnly, "%s on the replica", name)
	}

	// A store opened read-write on the replica: LiteFS makes the file
	// read-only there (mode 0444). A process that may still open it for
	// writing (root) fails at the first write with ErrIO, as LiteFS refuses
	// the write itself (EACCES); any other fails with ErrReadOnly.
	rw, err := kvstore.Open(c.replica.path(liteDB), kvstore.Options{Clock: kvstore.NewManualClock(liteEpoch)})
	if err == nil {
		err = rw.Put([]byte("x"), []byte("y"))
		require.NoError(t, rw.Close())
	}
	require.Error(t, err, "a write through a read-write store on the replica")
	require.True(t, errors.Is(err, kvstore.ErrReadOnly) || errors.Is(err, kvstore.ErrIO), "got %v", err)
	t.Logf("a read-write store on the replica: %v", err)

	after, _, err := readPos(c.replica, liteDB)
	require.NoError(t, err)
	require.Equal(t, before, after, "the replica's position did not move")
	n, err := r.check(ctx)
	require.NoError(t, err)
	require.Equal(t, written, n)
	_, err = r.db.Get([]byte("x"))
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	pn, err := p.check(ctx)
	require.NoError(t, err)
	require.Equal(t, written, pn, "nothing reached the primary")

	// Replication goes on after the refused writes.
	require.NoError(t, p.write(ctx, written+1))
	pos, _, err := readPos(c.primary, liteDB)
	require.NoError(t, err)
	waitPos(t, c.replica, liteDB, pos, liteConvergeBound)
	n, err = r.check(ctx)
	require.NoError(t, err)
	require.Equal(t, written+1, n)
	require.NoError(t, r.db.IntegrityCheck(ctx))
}

// testLiteFSExpiry checks that TTLs on the replica follow the replica's own
// clock: a key past its expiry there is not returned, though nothing can
// purge it on the replica.
func testLiteFSExpiry(t *testing.T, c *liteCluster, r *liteStore) {
	clk := kvstore.NewManualClock(liteEpoch)
	db, err := kvstore.Open(c.replica.path(liteDB), kvstore.Options{ReadOnly: true, Clock: clk})
	require.NoError(t, err)
	defer db.Close()
	ttlCF, err := db.OpenColumnFamily("ttl")
	require.NoError(t, err)
	d, err := ttlCF.TTL(tKey(2))
	require.NoError(t, err)
	require.Equal(t, ttlOf(2), d)
	clk.Advance(ttlOf(2))
	_, err = ttlCF.Get(tKey(2))
	require.ErrorIs(t, err, kvstore.ErrNotFound, "expired on the replica's clock")
	_, err = ttlCF.Get(tKey(3))
	require.NoError(t, err, "not yet expired")
	_, err = db.PurgeExpiredAll(context.Background())
	require.ErrorIs(t, err, kvstore.ErrReadOnly, "purging is the primary's job")
	// The long-lived store, on its own clock, still sees the key.
	_, err = r.ttlCF.Get(tKey(2))
	require.NoError(t, err)
}

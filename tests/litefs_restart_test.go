package tests

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TestLiteFSPrimaryRestart restarts the primary in the middle of the
// writes, restarts it on the same data directory, reopens the store and
// writes on, and checks what reaches the replica, whose store stays open
// throughout.
//
//   - "app then litefs": the application stops first (its context is
//     cancelled while it writes and it closes the store), then litefs gets
//     SIGTERM, the order litefs's own exec mode keeps. Every acknowledged
//     write survives and reaches the replica.
//   - litefs stopped (SIGTERM) or killed (SIGKILL) under a writer that is
//     still writing. LiteFS turns a transaction into its replication log
//     when SQLite releases the WAL write lock, after SQLite has acknowledged
//     the commit; a litefs that stops between the two loses that last
//     transaction (its restart truncates the WAL to the log). So at most the
//     last acknowledged write may be missing; everything before it survives,
//     and the replica ends with exactly what the primary has.
func TestLiteFSPrimaryRestart(t *testing.T) {
	t.Run("app then litefs", func(t *testing.T) { testLiteFSPrimaryRestart(t, syscall.SIGTERM, true) })
	t.Run("litefs terminated under the writer", func(t *testing.T) { testLiteFSPrimaryRestart(t, syscall.SIGTERM, false) })
	t.Run("litefs killed under the writer", func(t *testing.T) { testLiteFSPrimaryRestart(t, syscall.SIGKILL, false) })
}

func testLiteFSPrimaryRestart(t *testing.T, sig syscall.Signal, appFirst bool) {
	c := startLiteCluster(t)
	ctx := context.Background()
	p := openLiteStore(t, c.primary.path(liteDB), kvstore.Options{})
	require.NoError(t, p.write(ctx, 1))
	pos, _, err := readPos(c.primary, liteDB)
	require.NoError(t, err)
	waitPos(t, c.replica, liteDB, pos, liteConvergeBound)
	// The replica's store runs with the settings docs/replication.md
	// recommends for a replica that must stay current.
	r := openLiteStore(t, c.replica.path(liteDB), kvstore.Options{ReadOnly: true, ReadHold: -1, MaxReaders: 1})
	defer r.db.Close()

	// Write until a write fails: the application is stopped, or litefs
	// under it.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	acked := make(chan int, 1)
	go func() {
		i := 1
		for {
			if err := p.write(wctx, i+1); err != nil {
				t.Logf("step %d failed: %v", i+1, err)
				acked <- i
				return
			}
			i++
		}
	}()
	time.Sleep(time.Second)
	if appFirst {
		cancel()
		last := <-acked
		require.NoError(t, p.db.Close())
		acked <- last
	}
	c.primary.stop(sig)
	last := <-acked
	t.Logf("%d steps acknowledged before the primary stopped", last)
	if !appFirst {
		_ = p.db.Close() // its files went with the mount; the error says so
	}

	// Restart the primary on the same data directory: it holds every
	// acknowledged step (but the last one when litefs stopped under the
	// writer), and at most the one in flight besides.
	c.primary.start()
	p = openLiteStore(t, c.primary.path(liteDB), kvstore.Options{})
	defer p.db.Close()
	n, err := p.check(ctx)
	require.NoError(t, err)
	if appFirst {
		require.GreaterOrEqual(t, n, last, "an acknowledged step was lost on the primary")
	} else {
		require.GreaterOrEqual(t, n, last-1, "more than the last acknowledged step was lost on the primary")
		if n < last {
			t.Logf("the last acknowledged step (%d) was lost: litefs stopped before it logged it", last)
		}
	}
	require.LessOrEqual(t, n, last+1)
	require.NoError(t, p.db.IntegrityCheck(ctx))

	// Write on, then check that the replica converges on everything.
	written := n
	for range 200 {
		written++
		require.NoError(t, p.write(ctx, written))
	}
	pos, _, err = readPos(c.primary, liteDB)
	require.NoError(t, err)
	took := waitPos(t, c.replica, liteDB, pos, liteConvergeBound)
	t.Logf("the replica reached the restarted primary's position %v after the last write", took.Round(time.Millisecond))
	deadline := time.Now().Add(liteConvergeBound)
	for {
		got, err := r.check(ctx)
		require.NoError(t, err, "the replica's long-lived store")
		if got == written {
			break
		}
		require.True(t, time.Now().Before(deadline), "the replica's store saw %d of %d steps", got, written)
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, r.db.IntegrityCheck(ctx))
}

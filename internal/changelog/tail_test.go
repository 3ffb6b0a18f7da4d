package changelog

import (
	"context"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/stretchr/testify/require"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A notify with nobody waiting, or many in a row, never blocks.
func TestNotifyNeverBlocks(t *testing.T) {
	var n Notifier
	for range 1000 {
		n.Notify()
	}
	ch := n.Changed()
	n.Notify()
	require.True(t, closed(ch), "Changed was not closed by Notify")
	require.EqualValues(t, 1001, n.Commits())
}

// Hold lets the leader read at once after a quiet spell or for a lone
// commit, and makes it wait out the interval when commits stream (more
// than one past its last read) and the last refresh was sooner, so that
// one read carries the commits of the interval.
func TestHoldGathersTheCommitsOfAnInterval(t *testing.T) {
	n := Notifier{Interval: 10 * time.Second}
	n.Notify()
	n.Notify()
	t0 := time.Now()
	n.Hold(0)
	require.Less(t, time.Since(t0), 10*time.Second, "after a quiet spell: at once")
	t0 = time.Now()
	n.Hold(1)
	require.Less(t, time.Since(t0), 10*time.Second, "one commit past the read: at once")
	n.Interval = 30 * time.Millisecond
	t0 = time.Now()
	n.Hold(0)
	require.GreaterOrEqual(t, time.Since(t0), 25*time.Millisecond, "a stream, right after a refresh: the interval is waited out")
	n.Interval = -1
	t0 = time.Now()
	n.Hold(0)
	require.Less(t, time.Since(t0), 10*time.Second, "no interval: at once")
}

// A reader whose read did not see every commit counted gets a closed
// channel though their Notify closed a channel taken before its own; one
// that saw them all waits.
func TestChangedSinceWakesForCommitsNotSeen(t *testing.T) {
	var n Notifier
	n.Notify() // nobody waits: counted only
	seen := n.Commits()
	ch := n.ChangedSince(seen)
	require.False(t, closed(ch), "every commit seen: nothing to wake for")
	require.True(t, closed(n.ChangedSince(seen-1)), "a commit not seen")
	ch = n.ChangedSince(seen)
	n.Notify()
	require.True(t, closed(ch))
}

// The Waiter's one timer serves wait after wait: a wake, then the commit
// mark's poll, then the context.
func TestWaiterReusesItsTimer(t *testing.T) {
	var w Waiter
	wake := make(chan struct{})
	close(wake)
	for range 3 {
		require.NoError(t, w.Wait(t.Context(), nil, wake, engine.CommitMark{}, false, time.Hour))
	}
	require.NotNil(t, w.t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, w.Wait(ctx, nil, make(chan struct{}), engine.CommitMark{}, false, time.Hour), context.Canceled)
}

// A commit no leader waits for wakes the readers waiting for a refresh,
// unless a reader leads (it is reading, and will refresh or wait again):
// the last leader may never read again.
func TestNotifyWithoutALeaderWakesTheWaitingReaders(t *testing.T) {
	var pc PageCache
	var n Notifier
	n.SetOrphan(pc.WakeLeaderless)
	pub := pc.Published()
	require.True(t, pc.Lead())
	n.Notify() // the leader is not waiting on Changed, but leads
	require.False(t, closed(pub))
	pc.Unlead()
	require.True(t, closed(pub), "the end of a lead wakes the others")
	pub = pc.Published()
	n.Notify() // nobody leads
	require.True(t, closed(pub))

	pub = pc.Published()
	ch := n.Changed() // a leader waits
	n.Notify()
	require.True(t, closed(ch))
	require.False(t, closed(pub), "the waiting leader refreshes and wakes the others")
}

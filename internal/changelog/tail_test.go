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

// After a quiet spell a commit wakes the waiting readers at once, inside
// Notify; a commit that follows a wake-up closely arms one wake-up at the
// end of the interval, which the commits until then join.
func TestNotifyWakesAtOnceWhenQuietAndCoalescesAStream(t *testing.T) {
	n := Notifier{Interval: time.Hour}
	ch := n.Changed()
	n.Notify()
	require.True(t, closed(ch), "the first commit after a quiet spell wakes at once")
	ch = n.Changed()
	n.Notify()
	n.Notify()
	require.False(t, closed(ch), "a commit within the interval waits for the armed wake-up")
	require.True(t, n.armed)
	// A reader that has seen every commit waits on the same channel; one
	// that has not gets it too (the armed wake-up carries its commits).
	require.Equal(t, ch, n.ChangedSince(n.Commits()))
	require.Equal(t, ch, n.ChangedSince(0))
	n.timer.Stop()

	n = Notifier{Interval: time.Millisecond}
	ch = n.Changed()
	n.Notify()
	require.True(t, closed(ch))
	ch = n.Changed()
	n.Notify()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("the armed wake-up did not come")
	}
	require.False(t, n.armed)
	time.Sleep(2 * time.Millisecond) // a quiet spell again
	ch = n.Changed()
	n.Notify()
	require.True(t, closed(ch), "after the interval a commit wakes at once again")
}

// A reader whose read did not see every commit counted gets a wake-up for
// them though their own wake-up went to a channel taken before its own:
// at once after a quiet spell, else armed. One that saw them all waits.
func TestChangedSinceWakesForCommitsNotSeen(t *testing.T) {
	n := Notifier{Interval: time.Hour}
	n.Notify() // nobody waits: counted only
	seen := n.Commits()
	ch := n.ChangedSince(seen)
	require.False(t, closed(ch), "every commit seen: nothing to wake for")
	require.True(t, closed(n.ChangedSince(seen-1)), "a commit not seen, after a quiet spell: at once")
	ch = n.ChangedSince(seen - 1)
	require.False(t, closed(ch), "just after a wake-up: armed")
	require.True(t, n.armed)
	n.timer.Stop()
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

package changelog

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// relayWaiter is a reader waiting in the relay in a goroutine of its own:
// got receives what WaitPublished returned.
type relayWaiter struct {
	t      Turn
	cancel context.CancelFunc
	got    chan relayGot
}

type relayGot struct {
	turn bool
	err  error
}

// queued returns how many readers wait for the next wake-up and how many
// the last one woke that wait for their turn.
func queued(pc *PageCache) (waiting, due int) {
	pc.wmu.Lock()
	defer pc.wmu.Unlock()
	return len(pc.waiting), len(pc.due) - pc.dueAt
}

// startWaiter starts a reader waiting in pc's relay since the count of
// wake-ups now and returns once it is queued.
func startWaiter(t *testing.T, pc *PageCache) *relayWaiter {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	w := &relayWaiter{cancel: cancel, got: make(chan relayGot, 1)}
	before, _ := queued(pc)
	since := pc.Published()
	go func() {
		turn, err := pc.WaitPublished(ctx, since, &w.t)
		w.got <- relayGot{turn, err}
	}()
	require.Eventually(t, func() bool { n, _ := queued(pc); return n == before+1 }, 5*time.Second, time.Millisecond)
	return w
}

// woken reports whether w has returned, and what.
func (w *relayWaiter) woken(t *testing.T) (relayGot, bool) {
	t.Helper()
	select {
	case g := <-w.got:
		return g, true
	case <-time.After(20 * time.Millisecond):
		return relayGot{}, false
	}
}

func (w *relayWaiter) mustHaveTurn(t *testing.T, msg string) {
	t.Helper()
	select {
	case g := <-w.got:
		require.NoError(t, g.err, msg)
		require.True(t, g.turn, msg)
	case <-time.After(5 * time.Second):
		t.Fatal(msg + ": not woken")
	}
}

func (w *relayWaiter) mustWait(t *testing.T, msg string) {
	t.Helper()
	_, ok := w.woken(t)
	require.False(t, ok, msg)
}

// A wake-up wakes the waiting readers one after another, in the order
// they came: the first at once, each next when the one before passes its
// turn on.
func TestRelayWakesTheWaitingReadersInTurn(t *testing.T) {
	var pc PageCache
	ws := []*relayWaiter{startWaiter(t, &pc), startWaiter(t, &pc), startWaiter(t, &pc)}
	pc.Wake()
	ws[0].mustHaveTurn(t, "the first waiting reader")
	ws[1].mustWait(t, "the second waits for the first to pass its turn on")
	ws[2].mustWait(t, "the third too")
	pc.PassOn()
	ws[1].mustHaveTurn(t, "the second")
	ws[2].mustWait(t, "the third waits for the second")
	pc.PassOn()
	ws[2].mustHaveTurn(t, "the third")
	pc.PassOn()
	pc.wmu.Lock()
	require.Zero(t, pc.turns)
	pc.wmu.Unlock()
}

// A reader whose count of wake-ups is behind (a wake-up came after it
// took the count, before its wait) does not wait and has no turn.
func TestRelayWaitAfterAWakeUpReturnsAtOnce(t *testing.T) {
	var pc PageCache
	var tn Turn
	since := pc.Published()
	pc.Wake()
	turn, err := pc.WaitPublished(t.Context(), since, &tn)
	require.NoError(t, err)
	require.False(t, turn)
	waiting, due := queued(&pc)
	require.Zero(t, waiting+due)
}

// A reader that comes to wait during a relay (it read after the wake-up)
// waits for the next wake-up, not for the relay under way; a wake-up
// during a relay starts no second one: the readers it wakes come after
// those due.
func TestRelayReadersJoiningMidPass(t *testing.T) {
	var pc PageCache
	a, b := startWaiter(t, &pc), startWaiter(t, &pc)
	pc.Wake()
	a.mustHaveTurn(t, "a")
	c := startWaiter(t, &pc) // joins while a holds the turn
	pc.PassOn()
	b.mustHaveTurn(t, "b")
	pc.PassOn()
	c.mustWait(t, "c waits for the next wake-up")

	d := startWaiter(t, &pc) // c, d wait
	pc.Wake()
	c.mustHaveTurn(t, "c")
	e := startWaiter(t, &pc) // joins mid-pass
	pc.Wake()                // while c holds the turn: e is due after d
	d.mustWait(t, "a wake-up during a relay gives no second turn")
	e.mustWait(t, "e neither")
	pc.PassOn()
	d.mustHaveTurn(t, "d")
	e.mustWait(t, "e waits for d")
	pc.PassOn()
	e.mustHaveTurn(t, "e")
	pc.PassOn()
}

// A reader that leaves while it waits for its turn is taken out of the
// relay, and one that leaves as its turn comes passes the turn on: the
// readers after it are woken all the same.
func TestRelayReaderLeavingPassesItsTurnOn(t *testing.T) {
	var pc PageCache
	a, b, c := startWaiter(t, &pc), startWaiter(t, &pc), startWaiter(t, &pc)
	b.cancel() // leaves while waiting for the wake-up
	g := <-b.got
	require.ErrorIs(t, g.err, context.Canceled)
	require.False(t, g.turn)
	pc.Wake()
	a.mustHaveTurn(t, "a")
	pc.PassOn()
	c.mustHaveTurn(t, "c, past the reader that left")
	pc.PassOn()

	// Leaving as the turn comes: either the reader takes its turn (and
	// passes it on, as a reader does) or it leaves and passes it on;
	// the next is woken either way.
	for range 200 {
		a, b := startWaiter(t, &pc), startWaiter(t, &pc)
		a.cancel()
		pc.Wake()
		g := <-a.got
		if g.turn {
			require.NoError(t, g.err)
			pc.PassOn()
		} else {
			require.ErrorIs(t, g.err, context.Canceled)
		}
		b.mustHaveTurn(t, "the reader after one that left")
		pc.PassOn()
		pc.wmu.Lock()
		require.Zero(t, pc.turns)
		pc.wmu.Unlock()
	}
}

// A wait for the relay and its turn allocate nothing: the reader's
// channel and the queues are reused.
func TestRelayWaitAllocatesNothing(t *testing.T) {
	var pc PageCache
	kick := make(chan struct{})
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-kick:
			case <-stop:
				return
			}
			for {
				if n, _ := queued(&pc); n > 0 {
					break
				}
				time.Sleep(10 * time.Microsecond)
			}
			pc.Wake()
		}
	}()
	var tn Turn
	ctx := context.Background()
	allocs := testing.AllocsPerRun(50, func() {
		since := pc.Published()
		kick <- struct{}{}
		turn, err := pc.WaitPublished(ctx, since, &tn)
		if err != nil || !turn {
			t.Error("no turn")
		}
		pc.PassOn()
	})
	require.Zero(t, allocs)
}

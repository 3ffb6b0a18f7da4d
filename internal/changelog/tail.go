package changelog

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/snkv-go/snkv/internal/engine"
)

// WakeInterval is the least time between two wake-ups a Notifier
// delivers. A commit after a quiet spell of at least WakeInterval wakes
// the readers at once; a commit sooner after the last wake-up arms one
// wake-up at last+WakeInterval, which every commit until then joins. While
// commits stream, the readers so wake at most once per interval and each
// wake-up reads every change committed since the last: the readers' work
// per commit is divided by the commits of an interval, and a change waits
// at most WakeInterval more (the in-process tail latency target is 1 ms).
const WakeInterval = 200 * time.Microsecond

// Notifier wakes the tailing readers of one process when a transaction
// that recorded changes commits. Notify never blocks: it counts the
// commit and closes the channel the readers wait on (at once, or at the
// wake-up it arms, see WakeInterval), and a new one is made for the next
// wait, so a reader that is busy misses nothing (it reads the backlog)
// and a writer never waits for a reader.
type Notifier struct {
	commits atomic.Uint64 // Notify calls
	mu      sync.Mutex
	ch      chan struct{}
	last    time.Time   // when ch was last closed
	armed   bool        // timer will close ch
	timer   *time.Timer // the armed wake-up (reused)
	// Interval overrides WakeInterval when not 0 (negative: every commit
	// wakes at once).
	Interval time.Duration
}

// Commits returns the number of Notify calls so far. Read before a read
// transaction begins, it counts only commits that transaction sees (a
// commit's hook runs once it has committed).
func (n *Notifier) Commits() uint64 { return n.commits.Load() }

// Changed returns a channel closed at the next wake-up.
func (n *Notifier) Changed() <-chan struct{} {
	return n.ChangedSince(^uint64(0))
}

// ChangedSince returns a channel closed at the next wake-up, for a reader
// that has read every change of the first seen commits (Commits read
// before its read): when more have been counted since, their wake-up may
// have gone to channels taken before this one, so the wake-up is made now
// (closed at once, or armed: see WakeInterval).
func (n *Notifier) ChangedSince(seen uint64) <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	ch := n.ch
	if n.commits.Load() > seen {
		n.deliverLocked()
	}
	return ch
}

// Notify counts a commit and wakes every reader waiting on Changed: at
// once when the last wake-up is WakeInterval old or older, else at
// last+WakeInterval. For a commit hook (engine.Tx.OnCommit).
func (n *Notifier) Notify() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.commits.Add(1)
	if n.ch == nil {
		// Nobody waits: a reader takes its channel with ChangedSince,
		// which sees this commit counted.
		return
	}
	n.deliverLocked()
}

// deliverLocked closes n.ch now, or arms the wake-up that will.
func (n *Notifier) deliverLocked() {
	if n.armed {
		return // the armed wake-up carries it
	}
	iv := n.Interval
	if iv == 0 {
		iv = WakeInterval
	}
	now := time.Now()
	if d := n.last.Add(iv).Sub(now); iv > 0 && d > 0 {
		n.armed = true
		if n.timer == nil {
			n.timer = time.AfterFunc(d, n.fire)
		} else {
			n.timer.Reset(d)
		}
		return
	}
	n.closeLocked(now)
}

// fire is the armed wake-up.
func (n *Notifier) fire() {
	n.mu.Lock()
	n.armed = false
	n.closeLocked(time.Now())
	n.mu.Unlock()
}

func (n *Notifier) closeLocked(now time.Time) {
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
		n.last = now
	}
}

// Waiter waits for commits (Wait) with one timer, reused from wait to
// wait. The zero Waiter is ready; it is for one goroutine.
type Waiter struct {
	t *time.Timer
}

// Wait returns when a commit may have happened since mark was read (db's
// CommitMark, read before the last read of the log): wake closed, or the
// commit mark changed, or it cannot be read; or with ctx's error when ctx
// ends first. It looks at the mark after poll (0: 2 ms), then at intervals
// that double while nothing commits, up to 4×poll: a reader that waits
// long costs a quarter of the wake-ups, and a commit of another process is
// seen within 4×poll.
func (w *Waiter) Wait(ctx context.Context, db *engine.DB, wake <-chan struct{}, mark engine.CommitMark, markOK bool, poll time.Duration) error {
	if poll <= 0 {
		poll = 2 * time.Millisecond
	}
	d := poll
	if w.t == nil {
		w.t = time.NewTimer(d)
	} else {
		w.t.Reset(d) // since Go 1.23 no stale value is left to drain
	}
	defer w.t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
			return nil
		case <-w.t.C:
			m, ok := db.CommitMark()
			if !ok || !markOK || m != mark {
				return nil
			}
			d = min(2*d, 4*poll)
			w.t.Reset(d)
		}
	}
}

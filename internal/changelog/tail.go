package changelog

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/snkv-go/snkv/internal/engine"
)

// WakeInterval is the least time between two refreshes of the readers'
// shared window while commits stream in this process. The leader (the
// waiting reader a commit wakes) that finds more than one commit past
// what it read, the mark of a stream (commits landed while the readers
// were busy with the last ones), sleeps until WakeInterval after the last
// refresh began (Hold), and its refresh then reads every change committed
// meanwhile: the readers' work per commit is divided by the commits of an
// interval, and a change waits at most WakeInterval more (the in-process
// tail latency target is 1 ms). A lone commit, after a quiet spell or
// right after the readers took the last one, reaches them at once.
const WakeInterval = 200 * time.Microsecond

// Notifier wakes the tailing readers of one process when a transaction
// that recorded changes commits. Notify never blocks: it counts the
// commit and closes the channel the leader waits on, and a new one is
// made for the next wait, so a reader that is busy misses nothing (it
// reads the backlog) and a writer never waits for a reader.
type Notifier struct {
	commits atomic.Uint64 // Notify calls
	mu      sync.Mutex
	ch      chan struct{}
	orphan  func() // see SetOrphan
	// Interval overrides WakeInterval when not 0 (negative: no hold).
	Interval time.Duration
	_        pad
	last     atomic.Int64 // when the last Hold ended (since holdEpoch; 0: never); the leader's alone
	_        pad
}

// Commits returns the number of Notify calls so far. Read before a read
// transaction begins, it counts only commits that transaction sees (a
// commit's hook runs once it has committed).
func (n *Notifier) Commits() uint64 { return n.commits.Load() }

// Changed returns a channel closed at the next Notify.
func (n *Notifier) Changed() <-chan struct{} {
	return n.ChangedSince(^uint64(0))
}

// ChangedSince returns a channel closed at the next Notify, for a reader
// that has read every change of the first seen commits (Commits read
// before its read): when more have been counted since, their Notify may
// have closed a channel taken before this one, so it is closed now.
func (n *Notifier) ChangedSince(seen uint64) <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	ch := n.ch
	if n.commits.Load() > seen {
		close(n.ch)
		n.ch = nil
	}
	return ch
}

// SetOrphan sets the function Notify calls when no reader waits on
// Changed (PageCache.WakeLeaderless): the readers waiting for a refresh
// then have no leader to do it unless one is reading.
func (n *Notifier) SetOrphan(f func()) {
	n.mu.Lock()
	n.orphan = f
	n.mu.Unlock()
}

// Notify counts a commit and wakes the reader waiting on Changed, or
// calls the orphan function when none waits. For a commit hook
// (engine.Tx.OnCommit).
func (n *Notifier) Notify() {
	n.mu.Lock()
	n.commits.Add(1)
	ch, f := n.ch, n.orphan
	if ch != nil {
		close(ch)
		n.ch = nil
	}
	n.mu.Unlock()
	if ch == nil && f != nil {
		f()
	}
}

// Hold is called by the leader, woken, before it reads, with the count of
// commits its last read covered (Commits before it): when more than one
// commit has been counted since and the last Hold ended less than
// WakeInterval ago, it sleeps until WakeInterval after it, so that one
// refresh carries the commits of the interval.
func (n *Notifier) Hold(seen uint64) {
	iv := n.Interval
	if iv == 0 {
		iv = WakeInterval
	}
	// Not under mu: only the leader holds, and the writer's Notify
	// takes mu.
	if last := n.last.Load(); iv > 0 && last != 0 && n.commits.Load() > seen+1 {
		if d := time.Duration(last) + iv - time.Since(holdEpoch); d > 0 {
			sleepShort(min(d, iv))
		}
	}
	n.last.Store(int64(max(time.Since(holdEpoch), 1)))
}

// holdEpoch is the origin of Notifier.last: a monotonic clock.
var holdEpoch = time.Now()

// Waiter waits for commits (Wait) with one timer, reused from wait to
// wait. The zero Waiter is ready; it is for one goroutine.
type Waiter struct {
	t *time.Timer
}

// IdlePolls is how many poll intervals apart a reader that watches the
// WAL (see Wait) still looks at the commit mark: a safety net for a
// write the watch could not see.
const IdlePolls = 100

// eventPolls is how many looks at the commit mark a write of the WAL
// starts, every poll for the first half, every 4×poll for the rest: a
// commit writes its frames, syncs them (which can take tens of
// milliseconds here) and only then publishes its mark.
const eventPolls = 32

// Wait returns when a commit may have happened since mark was read (db's
// CommitMark, read before the last read of the log): wake closed, or the
// commit mark changed, or it cannot be read; or with ctx's error when ctx
// ends first. It looks at the mark after poll (0: 2 ms), then at intervals
// that double while nothing commits, up to 4×poll, so a commit of another
// process is seen within 4×poll. Each look is a timer's wake-up, which
// alone costs about 0.9% of a core at 4×poll = 8 ms on a virtual machine;
// so a reader still waiting after that series watches the WAL file
// (inotify on Linux, where the file system is local): any process's
// commit writes its frames there before it publishes its mark. The watch's
// event starts a series of looks (eventPolls), and between them the mark
// is looked at only every IdlePolls×poll. Where there is no watch (other
// systems, FUSE as under LiteFS) it polls every 4×poll as before.
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
	var watch *walWatch
	tried := false
	defer func() {
		if watch != nil {
			// Closing the watch waits for its goroutine to leave its
			// read: not on the way back to the reader.
			go watch.release()
		}
	}()
	var walCh <-chan struct{}
	looks := eventPolls // looks since the last write of the WAL
	for {
		if watch != nil {
			walCh = watch.changed()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
			return nil
		case <-walCh:
			// A process wrote the WAL: look at the mark again.
			looks = 0
			d = poll
			w.t.Reset(d)
		case <-w.t.C:
			m, ok := db.CommitMark()
			if !ok || !markOK || m != mark {
				return nil
			}
			looks++
			switch {
			case watch != nil && looks < eventPolls/2:
				d = poll
			case watch != nil && looks < eventPolls:
				d = 4 * poll
			case d < 4*poll:
				d = min(2*d, 4*poll)
			case !tried:
				// The series ended without a commit: watch the WAL,
				// and look as after a write of it, for a commit whose
				// frames were written before the watch began.
				tried = true
				watch = watchWAL(db.Config().Path)
				looks = 0
				d = poll
			case watch != nil:
				d = IdlePolls * poll
			}
			w.t.Reset(d)
		}
	}
}

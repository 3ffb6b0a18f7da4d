package changelog

import (
	"context"
	"sync"
	"time"

	"github.com/snkv-go/snkv/internal/engine"
)

// Notifier wakes the tailing readers of one process when a transaction
// that recorded changes commits. Notify never blocks: it closes the
// channel the readers wait on and makes a new one, so a reader that is
// busy misses nothing (it reads the backlog) and a writer never waits for
// a reader.
type Notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

// Changed returns a channel closed at the next Notify.
func (n *Notifier) Changed() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

// Notify wakes every reader waiting on Changed. For a commit hook
// (engine.Tx.OnCommit).
func (n *Notifier) Notify() {
	n.mu.Lock()
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
	n.mu.Unlock()
}

// Wait returns when a commit may have happened since mark was read (db's
// CommitMark, read before the last read of the log): n's channel wake
// closed, or the commit mark changed, or it cannot be read; or with ctx's
// error when ctx ends first. It looks at the mark after poll (0: 2 ms),
// then at intervals that double while nothing commits, up to 4×poll: a
// reader that waits long costs a quarter of the wake-ups, and a commit of
// another process is seen within 4×poll.
func Wait(ctx context.Context, db *engine.DB, n *Notifier, wake <-chan struct{}, mark engine.CommitMark, markOK bool, poll time.Duration) error {
	if poll <= 0 {
		poll = 2 * time.Millisecond
	}
	d := poll
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
			return nil
		case <-t.C:
			m, ok := db.CommitMark()
			if !ok || !markOK || m != mark {
				return nil
			}
			d = min(2*d, 4*poll)
			t.Reset(d)
		}
	}
}

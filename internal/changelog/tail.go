package changelog

import (
	"context"
	"fmt"
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

// TailOptions configures Tail.
type TailOptions struct {
	Filter Filter
	// Batch is the most changes handed to the callback at once (0: 1,024).
	Batch int
	// Notifier, if set, wakes the reader at once on a commit in this
	// process.
	Notifier *Notifier
	// Poll is how often the reader looks for commits of other processes
	// (0: 2 ms). The look reads the WAL index's header, a memory read, so
	// an idle reader costs no query; where the header is not mapped it
	// reads the log's last sequence instead.
	Poll time.Duration
}

// Tail reads the changes from sequence from on that pass opts.Filter and
// hands them to fn in order, then waits for new commits and goes on, until
// ctx ends (it then returns ctx's error) or fn or a read fails. fn gets the
// position after the changes it is handed, which is where a resumed tail
// starts.
func Tail(ctx context.Context, db *engine.DB, from int64, opts TailOptions, fn func(chs []Change, next int64) error) error {
	if ctx == nil || db == nil || fn == nil {
		return fmt.Errorf("changelog: tail: %w", engine.ErrInvalidArgument)
	}
	batch := opts.Batch
	if batch <= 0 {
		batch = 1024
	}
	poll := opts.Poll
	if poll <= 0 {
		poll = 2 * time.Millisecond
	}
	var tick *time.Ticker
	for {
		var wake <-chan struct{}
		if opts.Notifier != nil {
			wake = opts.Notifier.Changed() // before the read: a commit after it closes this channel
		}
		mark, markOK := db.CommitMark()
		var chs []Change
		next := from
		err := db.WithReader(ctx, func(c *engine.Conn) error {
			var err error
			chs, next, err = ReadFiltered(ctx, c, from, opts.Filter, batch)
			return err
		})
		if err != nil {
			return err
		}
		moved := next != from
		from = next
		if len(chs) > 0 || moved {
			if err := fn(chs, from); err != nil {
				return err
			}
		}
		if len(chs) == batch {
			continue // more backlog
		}
		if tick == nil {
			tick = time.NewTicker(poll)
			defer tick.Stop()
		}
		if err := waitCommit(ctx, db, wake, tick, mark, markOK); err != nil {
			return err
		}
	}
}

// waitCommit returns when a commit may have happened since mark was read:
// the notifier fired, or the commit mark changed (or cannot be read).
func waitCommit(ctx context.Context, db *engine.DB, wake <-chan struct{}, tick *time.Ticker, mark engine.CommitMark, markOK bool) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
			return nil
		case <-tick.C:
			m, ok := db.CommitMark()
			if !ok || !markOK || m != mark {
				return nil
			}
		}
	}
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

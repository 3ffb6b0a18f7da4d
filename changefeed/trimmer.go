package changefeed

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/snkv-go/snkv/kvstore"
)

// TrimmerOptions configure a background Trimmer.
type TrimmerOptions struct {
	// Interval is the wait between two passes of Trim; 0: one second.
	Interval time.Duration
	// Step is the most changes one transaction deletes (0: 1,024): a
	// writer waits at most for one step.
	Step int
	// Force lets the trim pass named consumers' positions (Trim's force).
	Force bool
	// OnError, if set, is called (on the trimmer's goroutine) with a
	// pass's error; the trimmer goes on with the next pass.
	OnError func(error)
}

// Trimmer applies the feeds' retention in the background: every Interval
// it runs Trim in transactions of at most Step changes. Close stops it.
type Trimmer struct {
	cancel  context.CancelFunc
	done    chan struct{}
	trimmed atomic.Int64
	mu      sync.Mutex
	err     error
}

// StartTrimmer starts a background Trimmer of store's feeds; it stops when
// ctx ends, when Close is called, or when the store is closed.
func StartTrimmer(ctx context.Context, store *kvstore.Store, opts TrimmerOptions) (*Trimmer, error) {
	if err := checkCtx(ctx); err != nil {
		return nil, wrap("trimmer", err)
	}
	if store == nil {
		return nil, wrap("trimmer", fmt.Errorf("%w: nil store", ErrInvalidArgument))
	}
	if opts.Interval < 0 || opts.Step < 0 {
		return nil, wrap("trimmer", fmt.Errorf("%w: negative interval or step", ErrInvalidArgument))
	}
	if opts.Interval == 0 {
		opts.Interval = time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	t := &Trimmer{cancel: cancel, done: make(chan struct{})}
	go t.run(ctx, store, opts)
	return t, nil
}

func (t *Trimmer) run(ctx context.Context, store *kvstore.Store, opts TrimmerOptions) {
	defer close(t.done)
	tick := time.NewTicker(opts.Interval)
	defer tick.Stop()
	for {
		n, err := Trim(ctx, store, opts.Step, opts.Force)
		t.trimmed.Add(n)
		if err != nil && ctx.Err() == nil {
			if errors.Is(err, ErrClosed) {
				return
			}
			t.mu.Lock()
			t.err = err
			t.mu.Unlock()
			if opts.OnError != nil {
				opts.OnError(err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Trimmed reports how many changes the trimmer has deleted so far.
func (t *Trimmer) Trimmed() int64 { return t.trimmed.Load() }

// Close stops the trimmer, waits for its pass in progress to end (a step's
// transaction commits or rolls back), and returns the last pass's error,
// if any.
func (t *Trimmer) Close() error {
	if t == nil {
		return nil
	}
	t.cancel()
	<-t.done
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

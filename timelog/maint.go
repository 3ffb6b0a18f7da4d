package timelog

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// maintenance runs flushes and compactions: in a goroutine (Background) or
// one step per MaintStep call (Manual).
type maintenance struct {
	l      *Log
	wakeCh chan struct{}
	forced atomic.Bool // Compact was requested
	mu     sync.Mutex  // guards cancel and done
	cancel context.CancelFunc
	done   chan struct{}
	active atomic.Bool
}

func (m *maintenance) init(l *Log) {
	m.l = l
	m.wakeCh = make(chan struct{}, 1)
}

// wake nudges the goroutine, if any, without blocking or allocating.
func (m *maintenance) wake() {
	select {
	case m.wakeCh <- struct{}{}:
	default:
	}
}

func (m *maintenance) running() bool { return m.active.Load() }

func (m *maintenance) start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel, m.done = cancel, make(chan struct{})
	m.active.Store(true)
	go m.loop(ctx, m.done)
}

func (m *maintenance) stop() {
	m.mu.Lock()
	cancel, done := m.cancel, m.done
	m.cancel, m.done = nil, nil
	m.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
	m.active.Store(false)
}

func (m *maintenance) loop(ctx context.Context, done chan struct{}) {
	defer close(done)
	l := m.l
	tick := time.NewTicker(l.cfg.interval)
	defer tick.Stop()
	backoff := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.wakeCh:
		case <-tick.C:
		}
		for ctx.Err() == nil {
			did, err := l.maintStep(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				l.st.maintErrors.Add(1)
				if l.cfg.OnMaintError != nil {
					l.cfg.OnMaintError(err)
				}
				backoff = min(max(2*backoff, 10*time.Millisecond), l.cfg.interval)
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				continue
			}
			backoff = 0
			if !did {
				break
			}
		}
	}
}

// StartMaintenance starts the background goroutine. It is idempotent and
// safe from any goroutine; on a log opened with Manual maintenance it
// fails with ErrManualMode, on a read-only one with ErrReadOnly.
func (l *Log) StartMaintenance() error {
	if l.readOnly {
		return fmt.Errorf("timelog: %q: %w", l.name, ErrReadOnly)
	}
	if l.cfg.Maintenance == Manual {
		return fmt.Errorf("timelog: %q: %w", l.name, ErrManualMode)
	}
	// The check and the start under one lock: a Close between them would
	// stop nothing, and the goroutine would run on the closed log.
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return fmt.Errorf("timelog: %q: %w", l.name, ErrClosed)
	}
	l.maint.start()
	return nil
}

// StopMaintenance stops the background goroutine and waits for its current
// step to end. It is idempotent and safe from any goroutine.
func (l *Log) StopMaintenance() { l.maint.stop() }

// Compact requests a full compaction: every group of overlapping pages is
// merged and every record hidden by a stored delete is removed. Background
// maintenance does it soon; in Manual mode the next MaintStep calls do it.
func (l *Log) Compact() {
	l.maint.forced.Store(true)
	l.maint.wake()
}

// MaintStep does one unit of maintenance (flush one sealed buffer, or one
// compaction step) and reports whether it did any. A failed step loses
// nothing; ErrBusy means the store's write lock stayed taken and a retry
// is safe.
func (l *Log) MaintStep(ctx context.Context) (bool, error) {
	if err := func() error {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.checkWrite()
	}(); err != nil {
		return false, err
	}
	return l.maintStep(ctx)
}

func (l *Log) maintStep(ctx context.Context) (bool, error) {
	defer l.ret.deliver(l.cfg.ReleaseDrainLimit)
	l.mu.Lock()
	flush := len(l.sealed) > 0
	l.mu.Unlock()
	if flush {
		done, err := l.flushOne(ctx, ^uint64(0))
		return !done, err
	}
	force := l.maint.forced.Load()
	did, err := l.compactStep(ctx, force)
	if err == nil && !did && force {
		l.maint.forced.Store(false)
	}
	return did, err
}

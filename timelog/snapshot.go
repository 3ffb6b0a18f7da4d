package timelog

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/snkv-go/snkv/kvstore"
)

// Snapshot is a consistent view of a log: its flushed pages as one read
// transaction of the store sees them, plus the buffers at the same instant.
// Nothing written, flushed, compacted or deleted after it was taken changes
// what it returns. It holds one of the store's read connections
// (kvstore.Options.MaxReaders) until Close, and it delays the release of
// records dropped after it was taken (see Options.OnRelease).
//
// A Snapshot may be read by many goroutines at once; Close it once, when
// all reads are done. Iterators from it end with ErrClosed after Close.
type Snapshot struct {
	l      *Log
	tx     *kvstore.Tx
	t      tables // bound to tx
	man    *manifest
	runs   []*run // buffered records, oldest first (non-empty ones)
	tombs  []tomb // durable and buffered deletes
	epoch  uint64
	closed atomic.Bool
	// fetchMu lets many goroutines read one snapshot: its transaction
	// takes one statement at a time.
	fetchMu sync.Mutex
	// storedH is the values handle counter stored in tx (read on first
	// use, under fetchMu; storedOK once read).
	storedH  uint64
	storedOK bool
}

// Snapshot takes a snapshot; see SnapshotContext.
func (l *Log) Snapshot() (*Snapshot, error) { return l.SnapshotContext(context.Background()) }

// SnapshotContext takes a snapshot, waiting (until ctx ends or the store's
// BusyTimeout) for a free read connection if all are taken. Close it when
// done. It fails with ErrClosed on a closed log.
func (l *Log) SnapshotContext(ctx context.Context) (*Snapshot, error) {
	l.pubMu.Lock()
	defer l.pubMu.Unlock()
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("timelog: %q: %w", l.name, ErrClosed)
	}
	tx, err := l.store.Begin(ctx, false) // pins the read snapshot at once
	if err != nil {
		return nil, fromStore(fmt.Errorf("timelog: snapshot %q: %w", l.name, err))
	}
	m, err := l.txManifest(tx)
	if err != nil {
		_ = tx.Rollback()
		return nil, fromStore(fmt.Errorf("timelog: snapshot %q: %w", l.name, err))
	}
	s := &Snapshot{l: l, tx: tx, t: l.t.in(tx), man: m, epoch: m.epoch}
	s.tombs = slices.Clone(m.tombs)
	if !l.readOnly {
		l.mu.Lock()
		for _, r := range l.sealed {
			r.buf = nil // the snapshot refers to it now
			s.addRun(r)
		}
		s.addRun(l.mem.snapshot(l.nextRun + 1))
		l.mu.Unlock()
	}
	l.ret.pin(s.epoch)
	l.st.snapshots.Add(1)
	return s, nil
}

func (s *Snapshot) addRun(r *run) {
	s.tombs = append(s.tombs, r.tombs...)
	if len(r.recs) > 0 {
		s.runs = append(s.runs, r)
	}
}

// Close ends the snapshot: its read connection goes back to the store and
// handles it was holding back are released (up to
// Options.ReleaseDrainLimit of them in this call). A second Close returns
// ErrClosed.
func (s *Snapshot) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("timelog: snapshot: %w", ErrClosed)
	}
	s.fetchMu.Lock() // no read is in the transaction or copying its rows
	err := s.tx.Rollback()
	s.fetchMu.Unlock()
	s.l.ret.unpin(s.epoch)
	s.l.ret.deliver(s.l.cfg.ReleaseDrainLimit)
	if err != nil {
		return fromStore(fmt.Errorf("timelog: snapshot close: %w", err))
	}
	return nil
}

func (s *Snapshot) check() error {
	if s.closed.Load() {
		return fmt.Errorf("timelog: snapshot: %w", ErrClosed)
	}
	return nil
}

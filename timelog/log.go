package timelog

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
)

// Log is an open time series. Its methods are safe for concurrent use by
// many goroutines; writes are ordered by the sequence numbers they take.
type Log struct {
	store    *kvstore.Store
	name     string
	cfg      config
	t        tables
	readOnly bool
	lock     *writerLock
	ret      *retirer
	maint    maintenance
	st       counters

	// pubMu orders publication: a snapshot begins its read transaction and
	// captures the buffers under it, and a flush or compaction commits and
	// pops its sealed buffer under it, so a snapshot never sees a buffer
	// both flushed and queued, nor neither.
	pubMu sync.Mutex
	man   atomic.Pointer[manifest] // cached durable state, keyed by its gen

	// mu guards the buffers and the sequence counter.
	mu      sync.Mutex
	mem     *memtable
	sealed  []*run
	spare   []rec // a flushed buffer's array, for the next buffer
	nextRun uint64
	seq     uint64        // the last sequence number taken
	nextH   uint64        // values log: the next handle to assign
	room    chan struct{} // closed when a sealed buffer leaves the queue
	closed  bool

	// workMu serializes flushes, compactions and Drop, and guards checked.
	workMu sync.Mutex
	// checked maps a page id to the deletes it is known to hold nothing
	// for (memory only: after a restart pages are checked again once).
	checked map[uint64][]uint64
}

// Open opens the log name of store, creating it if it does not exist
// (unless read-only). It fails with ErrLocked if another Log, in this
// process or another, has it open for writing; ErrNotFound for a missing
// log opened read-only; ErrInvalidOption for bad options (a PageMaxBytes
// above the store's MaxValueSize among them); kvstore.ErrInvalidName
// for a bad name (1 to 240 bytes of UTF-8 without NUL).
//
// A writable Log takes the log's writer lock (see docs/timelog.md) and, in
// Background mode, starts its maintenance goroutine. A writable Open of a
// values log whose values table predates value blocks (one row per value)
// converts it first, in one write transaction (docs/format.md); a
// read-only Open of it fails with ErrValuesLayout, as does any Open of a
// values table in a newer layout. Open with Options.Values of a log
// written without values fails with ErrNoValues (see Options.Values).
//
// ctx bounds the opening (the tables' lookup or creation, reading the
// manifest, a conversion); the Log does not keep it. A nil ctx is
// ErrInvalidArgument.
func Open(ctx context.Context, store *kvstore.Store, name string, opts Options) (*Log, error) {
	if ctx == nil {
		return nil, fmt.Errorf("timelog: open %q: nil context: %w", name, ErrInvalidArgument)
	}
	cfg, err := opts.config(store.MaxValueSize())
	if err != nil {
		return nil, err
	}
	if err := validateName(name); err != nil {
		return nil, err
	}
	l := &Log{store: store, name: name, cfg: cfg, readOnly: opts.ReadOnly || store.ReadOnly(), room: make(chan struct{})}
	l.ret = newRetirer(cfg)
	l.checked = map[uint64][]uint64{}
	l.mem = newMemtable(cfg.memRecs, arrays{})
	if !l.readOnly {
		if l.lock, err = acquireLock(store, name); err != nil {
			return nil, err
		}
	}
	fail := func(err error) (*Log, error) {
		l.lock.release()
		return nil, fromStore(fmt.Errorf("timelog: open %q: %w", name, err))
	}
	if l.t, err = openTables(ctx, store, name); errors.Is(err, kvstore.ErrNotFound) {
		if l.readOnly {
			return fail(fmt.Errorf("%w: %w", ErrNotFound, err))
		}
		l.t, err = createTables(ctx, store, name)
	}
	if err != nil {
		return fail(err)
	}
	var m *manifest
	if err := store.View(ctx, func(tx *kvstore.Tx) error {
		m, err = loadManifest(l.t.in(tx))
		return err
	}); err != nil {
		return fail(err)
	}
	if err := l.openValues(ctx, m.seq != 0); err != nil {
		return fail(err)
	}
	l.man.Store(m)
	l.seq = m.seq
	l.maint.init(l)
	if !l.readOnly && cfg.Maintenance == Background {
		l.maint.start()
	}
	return l, nil
}

func validateName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty log name", kvstore.ErrInvalidName)
	}
	if len(name) > 240 {
		return fmt.Errorf("%w: log name of %d bytes (at most 240)", kvstore.ErrInvalidName, len(name))
	}
	return nil
}

func openTables(ctx context.Context, s *kvstore.Store, name string) (tables, error) {
	var t tables
	var err error
	if t.meta, err = layer.OpenHiddenTable(ctx, s, kind, name+suffixMeta); err != nil {
		return t, err
	}
	if t.pages, err = layer.OpenHiddenTable(ctx, s, kind, name+suffixPages); err != nil {
		return t, err
	}
	t.tombs, err = layer.OpenHiddenTable(ctx, s, kind, name+suffixTombs)
	return t, err
}

func createTables(ctx context.Context, s *kvstore.Store, name string) (tables, error) {
	var t tables
	err := s.Update(ctx, func(tx *kvstore.Tx) error {
		var err error
		if t.pages, err = layer.CreateHiddenTable(tx, kind, name+suffixPages); err != nil {
			return err
		}
		if t.tombs, err = layer.CreateHiddenTable(tx, kind, name+suffixTombs); err != nil {
			return err
		}
		// The meta table is made last: its presence marks a complete log.
		t.meta, err = layer.CreateHiddenTable(tx, kind, name+suffixMeta)
		return err
	})
	if errors.Is(err, kvstore.ErrExists) { // created concurrently
		return openTables(ctx, s, name)
	}
	return t, err
}

// List returns the names of the logs of store, sorted bytewise.
func List(ctx context.Context, store *kvstore.Store) ([]string, error) {
	names, err := layer.ListHiddenTables(ctx, store, kind)
	if err != nil {
		return nil, fromStore(fmt.Errorf("timelog: list: %w", err))
	}
	var logs []string
	for _, n := range names {
		if base, ok := strings.CutSuffix(n, suffixMeta); ok {
			logs = append(logs, base)
		}
	}
	return logs, nil
}

// Name returns the log's name.
func (l *Log) Name() string { return l.name }

// ReadOnly reports whether the log was opened read-only.
func (l *Log) ReadOnly() bool { return l.readOnly }

func (l *Log) checkWrite() error {
	switch {
	case l.closed:
		return fmt.Errorf("timelog: %q: %w", l.name, ErrClosed)
	case l.readOnly:
		return fmt.Errorf("timelog: %q: %w", l.name, ErrReadOnly)
	}
	return nil
}

// Append adds the record (ts, h) to the write buffer. It returns nil when
// the record is accepted; an error means it was not, and nothing was
// written: ErrClosed, ErrReadOnly, or the error of the flush that had to
// make room for it (ErrBusy: the store's write lock stayed taken; retry).
// Only the BusyAcceptAndReport policy returns an error for an accepted
// record, ErrQueueFull (do not retry). The record is durable after the
// next flush (Flush, Close, maintenance).
func (l *Log) Append(ts int64, h uint64) error {
	if l.t.values != nil {
		return l.errValuesLog()
	}
	l.mu.Lock()
	if err := l.admit(1); err != nil {
		l.mu.Unlock()
		return err
	}
	l.seq++
	l.mem.add(rec{ts: ts, seq: l.seq, h: h})
	return l.afterWrite()
}

// AppendBatch adds every record of batch to the write buffer, all or
// nothing: a snapshot sees all of them or none. Records keep their order
// among equal timestamps. Results as Append.
func (l *Log) AppendBatch(batch []Record) error {
	if len(batch) == 0 {
		return nil
	}
	if l.t.values != nil {
		return l.errValuesLog()
	}
	l.mu.Lock()
	if err := l.admit(len(batch)); err != nil {
		l.mu.Unlock()
		return err
	}
	if need := len(l.mem.recs) + len(batch); need > cap(l.mem.recs) {
		l.mem.recs = growRecs(l.mem.recs, len(batch))
	}
	l.mem.addBatch(batch, l.seq)
	l.seq += uint64(len(batch))
	return l.afterWrite()
}

// DeleteRange deletes the records in [t1, t2) written before it; records
// appended later stay visible. t1 == t2 is a no-op, t1 > t2 fails with
// ErrInvalidRange. The delete is buffered like an append (same results).
func (l *Log) DeleteRange(t1, t2 int64) error {
	s, err := halfOpen(t1, t2)
	if err != nil {
		return err
	}
	return l.deleteSpan(s)
}

// DeleteBefore deletes the records in [math.MinInt64, cutoff).
func (l *Log) DeleteBefore(cutoff int64) error { return l.DeleteRange(math.MinInt64, cutoff) }

// DeleteFrom deletes the records in [t, math.MaxInt64], both ends included.
func (l *Log) DeleteFrom(t int64) error { return l.deleteSpan(span{t, math.MaxInt64}) }

func (l *Log) deleteSpan(s span) error {
	l.mu.Lock()
	if s.empty() {
		err := l.checkWrite()
		l.mu.Unlock()
		return err
	}
	if err := l.admit(1); err != nil {
		l.mu.Unlock()
		return err
	}
	l.seq++
	l.mem.addTomb(tomb{lo: s.lo, hi: s.hi, seq: l.seq})
	return l.afterWrite()
}

// admit readies the write buffer for a write of n entries (records,
// deletes, value bytes in units of recSize) before it is accepted; l.mu is
// held on entry and on return. A write that would overflow a buffer that
// is not empty seals it first; when the sealed queue is full too, the
// BusyWait and BusyFlush policies make room (l.mu released meanwhile),
// the others let the write into the full buffer. An error means the write
// must not be accepted.
func (l *Log) admit(n int) error {
	for {
		if err := l.checkWrite(); err != nil {
			return err
		}
		if size := l.mem.size(); size == 0 || size+n <= l.cfg.memRecs {
			return nil
		}
		if len(l.sealed) < l.cfg.SealedMaxRuns {
			l.sealLocked()
			l.maint.wake()
			return nil
		}
		if l.cfg.Busy == BusySilent || l.cfg.Busy == BusyAcceptAndReport {
			return nil
		}
		l.mu.Unlock()
		err := l.makeRoom()
		l.mu.Lock()
		if err != nil {
			return fmt.Errorf("timelog: %q: the write was not accepted: %w", l.name, err)
		}
	}
}

// makeRoom frees a place in the full sealed queue, for the BusyWait and
// BusyFlush policies (l.mu not held).
func (l *Log) makeRoom() error {
	l.st.busy.Add(1)
	ctx := context.Background()
	if l.cfg.Busy == BusyFlush {
		return l.flushAll(ctx)
	}
	if l.waitRoom() {
		return nil
	}
	defer l.ret.deliver(l.cfg.ReleaseDrainLimit)
	_, err := l.flushOne(ctx, math.MaxUint64)
	return err
}

// waitRoom waits up to SealedWait, with background maintenance running,
// for the sealed queue to have room (l.mu not held), and reports whether
// it has.
func (l *Log) waitRoom() bool {
	if l.cfg.Maintenance != Background || l.cfg.SealedWait <= 0 || !l.maint.running() {
		return false
	}
	deadline := time.NewTimer(l.cfg.SealedWait)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		room := l.room
		ok := len(l.sealed) < l.cfg.SealedMaxRuns
		l.mu.Unlock()
		if ok {
			return true
		}
		l.st.busyWaits.Add(1)
		select {
		case <-room:
		case <-deadline.C:
			return false
		}
	}
}

// afterWrite runs with l.mu held and releases it, once a write was
// accepted: it seals a full buffer if the queue has room and wakes
// maintenance. A full buffer that cannot be sealed waits for the next
// write, which makes room under BusyWait and BusyFlush; the other policies
// deal with it here.
func (l *Log) afterWrite() error {
	if l.mem.size() < l.cfg.memRecs {
		l.mu.Unlock()
		return nil
	}
	ok := len(l.sealed) < l.cfg.SealedMaxRuns
	if ok {
		l.sealLocked()
	}
	l.mu.Unlock()
	l.maint.wake()
	if ok || l.cfg.Busy == BusyWait || l.cfg.Busy == BusyFlush {
		return nil
	}
	return l.queueFull()
}

// sealLocked moves the active buffer to the sealed queue (l.mu held).
func (l *Log) sealLocked() {
	if l.mem.size() == 0 {
		return
	}
	l.nextRun++
	r, free := l.mem.seal(l.nextRun)
	l.sealed = append(l.sealed, r)
	if cap(free.recs) < l.cfg.memRecs {
		free.recs, l.spare = l.spare, nil
	}
	l.mem = newMemtable(l.cfg.memRecs, free)
}

// recycle keeps the array of flushed run r, if no one else refers to it,
// as the next write buffer (l.mu held). One is kept, and only one of the
// usual size: the array of a huge batch is let go.
func (l *Log) recycle(r *run) {
	if c := cap(r.buf); l.spare == nil && c >= l.cfg.memRecs && c <= 2*l.cfg.memRecs {
		l.spare = r.buf[:0]
	}
	r.buf = nil
}

// queueFull applies BusySilent or BusyAcceptAndReport to an accepted write
// that found the sealed queue full: it waits for room as waitRoom does and
// seals the buffer if room came; else BusyAcceptAndReport reports
// ErrQueueFull.
func (l *Log) queueFull() error {
	l.st.busy.Add(1)
	if l.waitRoom() {
		l.mu.Lock()
		if len(l.sealed) < l.cfg.SealedMaxRuns {
			l.sealLocked()
		}
		l.mu.Unlock()
		l.maint.wake()
		return nil
	}
	if l.cfg.Busy == BusySilent {
		return nil
	}
	return fmt.Errorf("timelog: %q: %w (do not retry the write)", l.name, ErrQueueFull)
}

// Close refuses with ErrSnapshotsOpen while snapshots or cursors are open;
// otherwise it stops maintenance, flushes everything, releases every
// releasable handle and the writer lock. A second Close returns ErrClosed.
// If the flush fails the log stays open and the error is returned, except
// on a store closed under the log, where nothing can be flushed any more:
// the log closes all the same (its writer lock let go) and the error,
// ErrClosed, counts the buffered records and deletes that were lost.
func (l *Log) Close() error {
	l.pubMu.Lock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		l.pubMu.Unlock()
		return fmt.Errorf("timelog: %q: %w", l.name, ErrClosed)
	}
	if n := l.ret.openSnapshots(); n > 0 {
		l.mu.Unlock()
		l.pubMu.Unlock()
		return fmt.Errorf("timelog: close %q: %w (%d)", l.name, ErrSnapshotsOpen, n)
	}
	l.closed = true // no write or snapshot gets in from here on
	l.mu.Unlock()
	l.pubMu.Unlock()
	l.maint.stop()
	if !l.readOnly {
		if err := l.flushAll(context.Background()); errors.Is(err, kvstore.ErrClosed) {
			// The store is closed: no flush will ever succeed, and a log
			// left open would keep its writer lock for the process's life.
			st := l.Stats()
			err = fmt.Errorf("timelog: close %q: %d buffered %s and %d %s not written: %w",
				l.name, st.BufferedRecords, plural(st.BufferedRecords, "record"),
				st.BufferedDeletes, plural(st.BufferedDeletes, "delete"), err)
			l.closeDown()
			return err
		} else if err != nil {
			l.mu.Lock()
			l.closed = false
			l.mu.Unlock()
			if l.cfg.Maintenance == Background {
				l.maint.start()
			}
			return err
		}
	}
	l.closeDown()
	return nil
}

// closeDown ends a closed log: the spare buffer goes, every releasable
// handle is released and the writer lock let go.
func (l *Log) closeDown() {
	l.mu.Lock()
	l.spare = nil
	l.mu.Unlock()
	l.ret.deliver(0)
	l.lock.release()
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

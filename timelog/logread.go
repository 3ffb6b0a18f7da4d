package timelog

import (
	"context"
	"fmt"
	"iter"
)

// The Log's read methods each run on a fresh snapshot, closed when the
// call (or the iteration) ends.

func (l *Log) fresh(f func(s *Snapshot) iter.Seq2[Record, error]) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		s, err := l.Snapshot()
		if err != nil {
			yield(Record{}, err)
			return
		}
		defer s.Close()
		for r, err := range f(s) {
			if !yield(r, err) {
				return
			}
		}
	}
}

// Range is Snapshot.Range on a fresh snapshot.
func (l *Log) Range(t1, t2 int64) iter.Seq2[Record, error] {
	return l.fresh(func(s *Snapshot) iter.Seq2[Record, error] { return s.Range(t1, t2) })
}

// RangeReverse is Snapshot.RangeReverse on a fresh snapshot.
func (l *Log) RangeReverse(t1, t2 int64) iter.Seq2[Record, error] {
	return l.fresh(func(s *Snapshot) iter.Seq2[Record, error] { return s.RangeReverse(t1, t2) })
}

// Since is Snapshot.Since on a fresh snapshot.
func (l *Log) Since(t int64) iter.Seq2[Record, error] {
	return l.fresh(func(s *Snapshot) iter.Seq2[Record, error] { return s.Since(t) })
}

// SinceReverse is Snapshot.SinceReverse on a fresh snapshot.
func (l *Log) SinceReverse(t int64) iter.Seq2[Record, error] {
	return l.fresh(func(s *Snapshot) iter.Seq2[Record, error] { return s.SinceReverse(t) })
}

// Until is Snapshot.Until on a fresh snapshot.
func (l *Log) Until(t int64) iter.Seq2[Record, error] {
	return l.fresh(func(s *Snapshot) iter.Seq2[Record, error] { return s.Until(t) })
}

// UntilReverse is Snapshot.UntilReverse on a fresh snapshot.
func (l *Log) UntilReverse(t int64) iter.Seq2[Record, error] {
	return l.fresh(func(s *Snapshot) iter.Seq2[Record, error] { return s.UntilReverse(t) })
}

// Equal is Snapshot.Equal on a fresh snapshot.
func (l *Log) Equal(t int64) iter.Seq2[Record, error] {
	return l.fresh(func(s *Snapshot) iter.Seq2[Record, error] { return s.Equal(t) })
}

// EqualReverse is Snapshot.EqualReverse on a fresh snapshot.
func (l *Log) EqualReverse(t int64) iter.Seq2[Record, error] {
	return l.fresh(func(s *Snapshot) iter.Seq2[Record, error] { return s.EqualReverse(t) })
}

// All is Snapshot.All on a fresh snapshot.
func (l *Log) All() iter.Seq2[Record, error] {
	return l.fresh(func(s *Snapshot) iter.Seq2[Record, error] { return s.All() })
}

// AllReverse is Snapshot.AllReverse on a fresh snapshot.
func (l *Log) AllReverse() iter.Seq2[Record, error] {
	return l.fresh(func(s *Snapshot) iter.Seq2[Record, error] { return s.AllReverse() })
}

// Columns is Snapshot.Columns on a fresh snapshot.
func (l *Log) Columns(t1, t2 int64) iter.Seq2[Columns, error] {
	return func(yield func(Columns, error) bool) {
		s, err := l.Snapshot()
		if err != nil {
			yield(Columns{}, err)
			return
		}
		defer s.Close()
		for c, err := range s.Columns(t1, t2) {
			if !yield(c, err) {
				return
			}
		}
	}
}

func withSnap[T any](l *Log, f func(s *Snapshot) (T, error)) (T, error) {
	s, err := l.Snapshot()
	if err != nil {
		var zero T
		return zero, err
	}
	defer s.Close()
	return f(s)
}

type found struct {
	r  Record
	ok bool
}

func withFound(l *Log, f func(s *Snapshot) (Record, bool, error)) (Record, bool, error) {
	v, err := withSnap(l, func(s *Snapshot) (found, error) {
		r, ok, err := f(s)
		return found{r, ok}, err
	})
	return v.r, v.ok, err
}

// Count is Snapshot.Count on a fresh snapshot.
func (l *Log) Count() (int64, error) { return withSnap(l, (*Snapshot).Count) }

// CountRange is Snapshot.CountRange on a fresh snapshot.
func (l *Log) CountRange(t1, t2 int64) (int64, error) {
	return withSnap(l, func(s *Snapshot) (int64, error) { return s.CountRange(t1, t2) })
}

// Min is Snapshot.Min on a fresh snapshot.
func (l *Log) Min() (Record, bool, error) { return withFound(l, (*Snapshot).Min) }

// Max is Snapshot.Max on a fresh snapshot.
func (l *Log) Max() (Record, bool, error) { return withFound(l, (*Snapshot).Max) }

// Next is Snapshot.Next on a fresh snapshot.
func (l *Log) Next(t int64) (Record, bool, error) {
	return withFound(l, func(s *Snapshot) (Record, bool, error) { return s.Next(t) })
}

// Prev is Snapshot.Prev on a fresh snapshot.
func (l *Log) Prev(t int64) (Record, bool, error) {
	return withFound(l, func(s *Snapshot) (Record, bool, error) { return s.Prev(t) })
}

// Cursor returns a cursor on a fresh snapshot that it owns: Close it.
func (l *Log) Cursor(reverse bool) (*Cursor, error) {
	s, err := l.Snapshot()
	if err != nil {
		return nil, err
	}
	c := s.Cursor(reverse)
	c.owns = true
	return c, nil
}

// Drop deletes the log with all its records, buffered ones included, in one
// transaction, then closes the log. Every record it held is announced to
// OnDrop after the commit (and released, no snapshot being open). It fails
// with ErrSnapshotsOpen while snapshots are open.
func (l *Log) Drop(ctx context.Context) error {
	l.pubMu.Lock()
	l.mu.Lock()
	if err := l.checkWrite(); err != nil {
		l.mu.Unlock()
		l.pubMu.Unlock()
		return err
	}
	if n := l.ret.openSnapshots(); n > 0 {
		l.mu.Unlock()
		l.pubMu.Unlock()
		return fmt.Errorf("timelog: drop %q: %w (%d)", l.name, ErrSnapshotsOpen, n)
	}
	l.closed = true
	l.mu.Unlock()
	l.pubMu.Unlock()
	l.maint.stop()
	reopen := func() {
		l.mu.Lock()
		l.closed = false
		l.mu.Unlock()
		if l.cfg.Maintenance == Background {
			l.maint.start()
		}
	}
	l.workMu.Lock()
	err := l.dropTx(ctx)
	l.workMu.Unlock()
	if err != nil {
		reopen()
		return fromStore(fmt.Errorf("timelog: drop %q: %w", l.name, err))
	}
	l.ret.deliver(0)
	l.lock.release()
	return nil
}

func (l *Log) dropTx(ctx context.Context) error {
	tx, err := l.store.Begin(ctx, true)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var all []rec
	for e, err := range tx.CF(l.t.pages).All() {
		if err != nil {
			return err
		}
		if all, err = decodePage(all, e.Value, -1, l.name, e.Key); err != nil {
			return err
		}
	}
	l.mu.Lock()
	for _, r := range l.sealed {
		all = append(all, r.recs...)
	}
	all = append(all, l.mem.recs...)
	l.mu.Unlock()
	suffixes := []string{suffixMeta, suffixPages, suffixTombs}
	if l.t.values != nil {
		suffixes = append(suffixes, suffixValues)
	}
	for _, suffix := range suffixes {
		if err := tx.DropHiddenTable(kind, l.name+suffix); err != nil {
			return err
		}
	}
	tx.OnCommit(func() { l.ret.queue(all, 0) })
	l.pubMu.Lock()
	defer l.pubMu.Unlock()
	if err := tx.Commit(); err != nil {
		return err
	}
	l.mu.Lock()
	l.sealed, l.mem = nil, newMemtable(0)
	l.mu.Unlock()
	return nil
}

package timelog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/snkv-go/snkv/kvstore"
)

// Values: a log opened with Options.Values keeps a byte payload with each
// record in the hidden table "<name>/values", keyed by the record's handle
// (8 bytes, big-endian). The log assigns the handles from a counter that
// is stored (meta row "nexthandle") in the transaction that writes the
// values. Buffered values stay in memory with their records and are
// written in the flush transaction that writes the records; every
// transaction that removes records deletes their values too, so a record
// and its value are always both there or both gone.

// Entry is a record with its value.
type Entry struct {
	Record
	Value []byte
}

// openValues opens (or, for a writable log asked for values, creates) the
// values table.
func (l *Log) openValues(ctx context.Context) error {
	name := l.name + suffixValues
	cf, err := l.store.OpenHiddenTable(ctx, kind, name)
	switch {
	case err == nil:
		l.t.values = cf
	case !errors.Is(err, kvstore.ErrNotFound):
		return err
	case l.cfg.Values && l.readOnly:
		return fmt.Errorf("%w: the log has no values table", ErrNoValues)
	case l.cfg.Values:
		err = l.store.Update(ctx, func(tx *kvstore.Tx) error {
			cf, err = tx.CreateHiddenTable(kind, name)
			return err
		})
		if errors.Is(err, kvstore.ErrExists) {
			cf, err = l.store.OpenHiddenTable(ctx, kind, name)
		}
		if err != nil {
			return err
		}
		l.t.values = cf
	default:
		return nil
	}
	return l.store.View(ctx, func(tx *kvstore.Tx) error {
		l.nextH, err = getU64(tx.CF(l.t.meta), metaNextHandle)
		return err
	})
}

// Values reports whether the log stores values.
func (l *Log) Values() bool { return l.t.values != nil }

func (l *Log) errValuesLog() error {
	return fmt.Errorf("timelog: %q: %w: a values log assigns handles (use AppendValue)", l.name, ErrValuesLog)
}

func (l *Log) checkValues(values [][]byte) error {
	if l.t.values == nil {
		return fmt.Errorf("timelog: %q: %w", l.name, ErrNoValues)
	}
	limit := l.store.MaxValueSize()
	for i, v := range values {
		if len(v) > limit {
			return fmt.Errorf("timelog: %q: value %d: %w: %d bytes (at most %d)", l.name, i, ErrValueTooLarge, len(v), limit)
		}
	}
	return nil
}

// AppendValue adds a record at ts carrying a copy of value and returns its
// handle, assigned by the log (increasing). Results as Append: ErrBusy
// means accepted (the handle is valid); ErrNoValues on a log without
// values and ErrValueTooLarge for a value above the store's
// MaxValueSize write nothing. The value is durable with its record.
func (l *Log) AppendValue(ts int64, value []byte) (uint64, error) {
	return l.AppendValues([]int64{ts}, [][]byte{value})
}

// AppendValues adds one record per timestamp, ts[i] carrying values[i],
// all or nothing: a snapshot sees all of them or none, and a bad value
// writes nothing. The handles are first, first+1, ... in batch order.
// len(ts) != len(values) fails with ErrInvalidArgument.
func (l *Log) AppendValues(ts []int64, values [][]byte) (first uint64, err error) {
	return l.appendValues(ts, values, nil)
}

// appendValues is AppendValues; before, if not nil, is called with the
// first handle before the records become visible (under l.mu).
func (l *Log) appendValues(ts []int64, values [][]byte, before func(first uint64)) (first uint64, err error) {
	if len(ts) != len(values) {
		return 0, fmt.Errorf("timelog: %q: %w: %d timestamps, %d values", l.name, ErrInvalidArgument, len(ts), len(values))
	}
	if err := l.checkValues(values); err != nil {
		return 0, err
	}
	copies := make([][]byte, len(values))
	for i, v := range values {
		copies[i] = slices.Clip(append([]byte{}, v...))
	}
	l.mu.Lock()
	if err := l.checkWrite(); err != nil {
		l.mu.Unlock()
		return 0, err
	}
	if len(ts) == 0 {
		l.mu.Unlock()
		return l.nextH, nil
	}
	// A batch lands in one buffer: seal first if it would not fit.
	if l.mem.size() > 0 && l.mem.size()+len(ts) > l.cfg.memRecs && len(l.sealed) < l.cfg.SealedMaxRuns {
		l.sealLocked()
	}
	first = l.nextH
	if before != nil {
		before(first)
	}
	for i, t := range ts {
		l.seq++
		l.mem.addValue(rec{ts: t, seq: l.seq, h: l.nextH}, copies[i])
		l.nextH++
	}
	return first, l.afterWrite()
}

func (m *memtable) addValue(r rec, v []byte) {
	if len(m.vals) == 0 {
		m.valBase = r.h
	}
	// Handles taken meanwhile by writes in a transaction (Log.In) leave
	// holes.
	for m.valBase+uint64(len(m.vals)) < r.h {
		m.vals = append(m.vals, nil)
	}
	m.add(r)
	m.vals = append(m.vals, v)
	m.valBytes += len(v)
}

// value returns the buffered value of h, if r holds it.
func (r *run) value(h uint64) ([]byte, bool) {
	if h < r.valBase || h-r.valBase >= uint64(len(r.vals)) {
		return nil, false
	}
	v := r.vals[h-r.valBase]
	return v, v != nil
}

func valueKey(h uint64) []byte { return u64(h) }

// flushValues writes the values of the kept records of r, and raises the
// handle counter above every handle of r, in the flush transaction.
func (l *Log) flushValues(t tables, r *run, keep []rec) error {
	if t.values == nil || len(r.vals) == 0 {
		return nil
	}
	for _, x := range keep {
		v, ok := r.value(x.h)
		if !ok {
			return fmt.Errorf("%w: buffered record %d without its value", ErrCorrupt, x.h)
		}
		if err := t.values.Put(valueKey(x.h), v); err != nil {
			return fmt.Errorf("write value %d: %w", x.h, err)
		}
	}
	return raiseHandle(t, r.valBase+uint64(len(r.vals)))
}

func raiseHandle(t tables, next uint64) error {
	stored, err := getU64(t.meta, metaNextHandle)
	if err != nil {
		return err
	}
	if next > stored {
		return t.meta.Put([]byte(metaNextHandle), u64(next))
	}
	return nil
}

// deleteValues deletes the values of removed records (a values log).
func deleteValues(t tables, removed []rec) error {
	if t.values == nil {
		return nil
	}
	for _, x := range removed {
		if err := t.values.Delete(valueKey(x.h)); err != nil {
			return fmt.Errorf("delete value %d: %w", x.h, err)
		}
	}
	return nil
}

// AppendValue writes one record with its value in the transaction and
// returns its handle (see Log.AppendValue).
func (w *TxWriter) AppendValue(ts int64, value []byte) (uint64, error) {
	return w.AppendValues([]int64{ts}, [][]byte{value})
}

// AppendValues writes records with their values in the transaction, all
// or nothing (see Log.AppendValues); they and their values commit or roll
// back with it. Handles of a rolled-back transaction are not reused by
// this Log.
func (w *TxWriter) AppendValues(ts []int64, values [][]byte) (first uint64, err error) {
	l := w.l
	if len(ts) != len(values) {
		return 0, fmt.Errorf("timelog: %q: %w: %d timestamps, %d values", l.name, ErrInvalidArgument, len(ts), len(values))
	}
	if err := l.checkValues(values); err != nil {
		return 0, err
	}
	if err := w.check(); err != nil {
		return 0, err
	}
	if len(ts) == 0 {
		return 0, nil
	}
	l.mu.Lock()
	l.seq += uint64(len(ts))
	seq := l.seq
	first = l.nextH
	l.nextH += uint64(len(ts))
	l.mu.Unlock()
	batch := make([]Record, len(ts))
	for i, t := range ts {
		batch[i] = Record{Ts: t, Handle: first + uint64(i)}
	}
	err = w.appendRecs(batch, seq, func(t tables) error {
		for i, v := range values {
			if err := t.values.Put(valueKey(first+uint64(i)), v); err != nil {
				return fmt.Errorf("write value %d: %w", first+uint64(i), err)
			}
		}
		return raiseHandle(t, first+uint64(len(ts)))
	})
	return first, err
}

// Value returns a copy of the value of handle h as the snapshot sees it:
// the value of every record the snapshot can return is there, even if the
// record was removed since. ErrValueNotFound if the snapshot has no value
// for h; ErrNoValues on a log without values.
func (s *Snapshot) Value(h uint64) ([]byte, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if s.t.values == nil {
		return nil, fmt.Errorf("timelog: %q: %w", s.l.name, ErrNoValues)
	}
	for _, r := range s.runs {
		if v, ok := r.value(h); ok {
			return slices.Clone(v), nil
		}
	}
	s.fetchMu.Lock()
	v, err := s.t.values.Get(valueKey(h))
	s.fetchMu.Unlock()
	if errors.Is(err, kvstore.ErrNotFound) {
		return nil, fmt.Errorf("timelog: %q: handle %d: %w", s.l.name, h, ErrValueNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("timelog: %q: value %d: %w", s.l.name, h, err)
	}
	return slices.Clone(v), nil
}

// valueCursor reads stored values through one cursor over the values
// table: a range read asks for handles mostly in increasing order (records
// are appended with increasing handles), so each is usually the next row,
// and a point look-up per record would cost a B-tree descent.
type valueCursor struct {
	s *Snapshot
	c *kvstore.Cursor
}

// get returns a copy of the value of h.
func (vc *valueCursor) get(h uint64) ([]byte, error) {
	s := vc.s
	if err := s.check(); err != nil {
		return nil, err
	}
	for _, r := range s.runs {
		if v, ok := r.value(h); ok {
			return slices.Clone(v), nil
		}
	}
	k := valueKey(h)
	s.fetchMu.Lock()
	defer s.fetchMu.Unlock()
	if vc.c == nil {
		c, err := s.t.values.Cursor(kvstore.IterOptions{Borrow: true})
		if err != nil {
			return nil, fmt.Errorf("timelog: %q: value %d: %w", s.l.name, h, err)
		}
		vc.c = c
	}
	if !(vc.c.Valid() && vc.c.Next() && bytes.Equal(vc.c.Key(), k)) {
		if !vc.c.Seek(k) || !bytes.Equal(vc.c.Key(), k) {
			if err := vc.c.Err(); err != nil {
				return nil, fmt.Errorf("timelog: %q: value %d: %w", s.l.name, h, err)
			}
			return nil, fmt.Errorf("timelog: %q: handle %d: %w", s.l.name, h, ErrValueNotFound)
		}
	}
	return slices.Clone(vc.c.Value()), nil
}

func (vc *valueCursor) close() {
	if vc.c != nil {
		vc.s.fetchMu.Lock()
		_ = vc.c.Close()
		vc.s.fetchMu.Unlock()
		vc.c = nil
	}
}

// withValues pairs every record of recs with its value.
func (s *Snapshot) withValues(recs iter.Seq2[Record, error]) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		if s.t.values == nil {
			yield(Entry{}, fmt.Errorf("timelog: %q: %w", s.l.name, ErrNoValues))
			return
		}
		vc := &valueCursor{s: s}
		defer vc.close()
		for r, err := range recs {
			if err != nil {
				yield(Entry{}, err)
				return
			}
			v, err := vc.get(r.Handle)
			if err != nil {
				if errors.Is(err, ErrValueNotFound) {
					err = fmt.Errorf("%w: %w", ErrCorrupt, err)
				}
				yield(Entry{}, err)
				return
			}
			if !yield(Entry{Record: r, Value: v}, nil) {
				return
			}
		}
	}
}

// RangeValues is Range yielding each record with its value (a copy, the
// caller's). A failure is yielded once, as the last step.
func (s *Snapshot) RangeValues(t1, t2 int64) iter.Seq2[Entry, error] {
	return s.withValues(s.Range(t1, t2))
}

// RangeValuesReverse is RangeReverse yielding records with their values.
func (s *Snapshot) RangeValuesReverse(t1, t2 int64) iter.Seq2[Entry, error] {
	return s.withValues(s.RangeReverse(t1, t2))
}

// AllValues is All yielding records with their values.
func (s *Snapshot) AllValues() iter.Seq2[Entry, error] { return s.withValues(s.All()) }

// IntegrityCheck reads the stored state of the log in one read
// transaction and verifies that every page decodes and, in a values log,
// that every stored record has its value and every value its record. It
// returns nil or an error wrapping ErrCorrupt that says what is wrong.
// Buffered records are not looked at (Flush first to include them).
func (l *Log) IntegrityCheck(ctx context.Context) error {
	return l.store.View(ctx, func(tx *kvstore.Tx) error {
		t := l.t.in(tx)
		handles := map[uint64]int{}
		var buf []rec
		for e, err := range t.pages.All() {
			if err != nil {
				return err
			}
			if buf, err = decodePage(buf[:0], e.Value, -1, l.name, e.Key); err != nil {
				return fmt.Errorf("integrity: %w", err) // decodePage names the log
			}
			for _, x := range buf {
				handles[x.h]++
			}
		}
		if t.values == nil {
			return nil
		}
		var orphans, dups []uint64
		for h, n := range handles {
			if n > 1 {
				dups = append(dups, h)
			}
		}
		for e, err := range t.values.All() {
			if err != nil {
				return err
			}
			if len(e.Key) != 8 {
				return fmt.Errorf("timelog: %q: integrity: %w: value key of %d bytes", l.name, ErrCorrupt, len(e.Key))
			}
			h := be.Uint64(e.Key)
			if _, ok := handles[h]; !ok {
				orphans = append(orphans, h)
				continue
			}
			delete(handles, h)
		}
		if len(orphans)+len(handles)+len(dups) == 0 {
			return nil
		}
		missing := make([]uint64, 0, len(handles))
		for h := range handles {
			missing = append(missing, h)
		}
		slices.Sort(missing)
		slices.Sort(orphans)
		slices.Sort(dups)
		return fmt.Errorf("timelog: %q: integrity: %w: %d values without a record %v, %d records without a value %v, %d handles twice %v",
			l.name, ErrCorrupt, len(orphans), head(orphans), len(missing), head(missing), len(dups), head(dups))
	})
}

func head(hs []uint64) []uint64 { return hs[:min(len(hs), 10)] }

// freshValues runs f on a fresh snapshot, closed when the iteration ends.
func (l *Log) freshValues(f func(s *Snapshot) iter.Seq2[Entry, error]) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		s, err := l.Snapshot()
		if err != nil {
			yield(Entry{}, err)
			return
		}
		defer s.Close()
		for e, err := range f(s) {
			if !yield(e, err) {
				return
			}
		}
	}
}

// RangeValues is Snapshot.RangeValues on a fresh snapshot.
func (l *Log) RangeValues(t1, t2 int64) iter.Seq2[Entry, error] {
	return l.freshValues(func(s *Snapshot) iter.Seq2[Entry, error] { return s.RangeValues(t1, t2) })
}

// RangeValuesReverse is Snapshot.RangeValuesReverse on a fresh snapshot.
func (l *Log) RangeValuesReverse(t1, t2 int64) iter.Seq2[Entry, error] {
	return l.freshValues(func(s *Snapshot) iter.Seq2[Entry, error] { return s.RangeValuesReverse(t1, t2) })
}

// AllValues is Snapshot.AllValues on a fresh snapshot.
func (l *Log) AllValues() iter.Seq2[Entry, error] {
	return l.freshValues(func(s *Snapshot) iter.Seq2[Entry, error] { return s.AllValues() })
}

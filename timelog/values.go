package timelog

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
)

// Values: a log opened with Options.Values keeps a byte payload with each
// record in the hidden table "<name>/values", packed in blocks keyed by
// handle (valblock.go). The log assigns the handles from a counter that
// is stored (meta row "nexthandle") in the transaction that writes the
// values. Buffered values stay in memory with their records and are
// written in the flush transaction that writes the records; every
// transaction that removes records removes their values too (rewriting
// their blocks), so a record and its value are always both there or both
// gone. Reads are in valread.go.

// Entry is a record with its value.
type Entry struct {
	Record
	Value []byte
}

// openValues opens (or, for a writable log asked for values, creates) the
// values table, and checks its layout (metaValuesLayout): a writable log
// converts a table of one row per value (valconvert.go). written tells
// whether the log has taken a sequence number (stored a record or a
// delete): such a log without a values table holds handles its caller
// chose, so it cannot become a values log.
func (l *Log) openValues(ctx context.Context, written bool) error {
	name := l.name + suffixValues
	cf, err := layer.OpenHiddenTable(ctx, l.store, kind, name)
	switch {
	case err == nil:
		l.t.values = cf
		if !l.readOnly {
			// A values table made before values could be sealed: sealed
			// from now on (and, in an encrypted store, its values now).
			if err := layer.SealHiddenTable(ctx, l.store, kind, name); err != nil {
				return err
			}
		}
	case !errors.Is(err, kvstore.ErrNotFound):
		return err
	case l.cfg.Values && l.readOnly:
		return fmt.Errorf("%w: the log has no values table", ErrNoValues)
	case l.cfg.Values && written:
		return fmt.Errorf("%w: the log was written without values (its handles are the caller's), so it cannot store them", ErrNoValues)
	case l.cfg.Values:
		err = l.store.Update(ctx, func(tx *kvstore.Tx) error {
			// Values are sealed in an encrypted store; the pages (timestamps
			// and handles) stay in the clear.
			if cf, err = layer.CreateHiddenTable(tx, kind, name, layer.HiddenSealed); err != nil {
				return err
			}
			return tx.CF(l.t.meta).Put([]byte(metaValuesLayout), u64(valuesLayout))
		})
		if errors.Is(err, kvstore.ErrExists) {
			cf, err = layer.OpenHiddenTable(ctx, l.store, kind, name)
		}
		if err != nil {
			return err
		}
		l.t.values = cf
	default:
		return nil
	}
	adopt, convert := false, false
	err = l.store.View(ctx, func(tx *kvstore.Tx) error {
		t := l.t.in(tx)
		if l.nextH, err = getU64(t.meta, metaNextHandle); err != nil {
			return err
		}
		layout, err := getU64(t.meta, metaValuesLayout)
		switch {
		case err != nil:
			return err
		case layout == valuesLayout:
			return nil
		case layout != 0:
			return fmt.Errorf("timelog: %q: %w: layout %d (this library reads layout %d)", l.name, ErrValuesLayout, layout, valuesLayout)
		}
		for _, err := range t.values.All() {
			if err != nil {
				return err
			}
			convert = true
			return nil
		}
		adopt = true // an empty table without the row: write it
		return nil
	})
	switch {
	case err != nil:
		return err
	case convert && l.readOnly:
		return l.errOldValuesLayout()
	case convert:
		return l.convertValues(ctx)
	case !adopt || l.readOnly:
		return nil
	}
	return l.store.Update(ctx, func(tx *kvstore.Tx) error {
		return tx.CF(l.t.meta).Put([]byte(metaValuesLayout), u64(valuesLayout))
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
// handle, assigned by the log (increasing). Results as Append (under
// BusyAcceptAndReport, ErrQueueFull means accepted: the handle is valid);
// ErrNoValues on a log without values and ErrValueTooLarge for a value
// above the store's MaxValueSize write nothing. The value is durable with
// its record.
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
	// One allocation holds the copies of the whole batch (never nil, even
	// for empty values: a buffered value is told from a hole by that).
	total := 0
	for _, v := range values {
		total += len(v)
	}
	buf := make([]byte, 0, total)
	copies := make([][]byte, len(values))
	for i, v := range values {
		n := len(buf)
		buf = append(buf, v...)
		copies[i] = buf[n:len(buf):len(buf)]
	}
	l.mu.Lock()
	if len(ts) == 0 {
		err := l.checkWrite()
		l.mu.Unlock()
		return l.nextH, err
	}
	if err := l.admit(len(ts) + total/recSize); err != nil {
		l.mu.Unlock()
		return 0, err
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

// flushValues writes the values of the kept records of r, packed in
// blocks, and raises the handle counter above every handle of r, in the
// flush transaction.
func (l *Log) flushValues(t tables, r *run, keep []rec) error {
	if t.values == nil || len(r.vals) == 0 {
		return nil
	}
	hs := make([]uint64, len(keep))
	for i, x := range keep {
		hs[i] = x.h
	}
	slices.Sort(hs)
	end := r.valBase + uint64(len(r.vals))
	// Rows written meanwhile by transactions (Log.In) with handles inside
	// this buffer's range: no block may span one of them.
	var others []uint64
	for e, err := range t.values.Range(u64(r.valBase), u64(end)) {
		if err != nil {
			return fmt.Errorf("read values: %w", err)
		}
		others = append(others, be.Uint64(e.Key))
	}
	p := newPacker(l.store.MaxValueSize(), l.cfg.ValueBlockBytes)
	j := 0
	for i, h := range hs {
		v, ok := r.value(h)
		if !ok {
			return fmt.Errorf("%w: buffered record %d without its value", ErrCorrupt, h)
		}
		cut := false
		for j < len(others) && others[j] < h {
			cut = cut || (i > 0 && others[j] > hs[i-1])
			j++
		}
		p.add(h, v, cut)
	}
	if err := putRows(t, p.done()); err != nil {
		return err
	}
	return raiseHandle(t, end)
}

func putRows(t tables, rows []blockRow) error {
	for _, row := range rows {
		if err := t.values.Put(row.key, row.value); err != nil {
			return fmt.Errorf("write value block %x: %w", row.key, err)
		}
	}
	return nil
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

// deleteValues removes the values of removed records (a values log): each
// block holding some is rewritten without them, or deleted if none is
// left. A removed record without its value is ErrCorrupt (nothing is
// written then).
func (l *Log) deleteValues(t tables, removed []rec) error {
	if t.values == nil || len(removed) == 0 {
		return nil
	}
	hs := make([]uint64, len(removed))
	for i, x := range removed {
		hs[i] = x.h
	}
	slices.Sort(hs)
	type change struct {
		key, value []byte // value nil: delete the row
	}
	var changes []change
	err := func() error {
		c, err := t.values.Cursor(kvstore.IterOptions{Reverse: true})
		if err != nil {
			return err
		}
		defer c.Close()
		for i := 0; i < len(hs); {
			h := hs[i]
			if !c.Seek(seekKey(h)) {
				if err := c.Err(); err != nil {
					return err
				}
				return fmt.Errorf("timelog: %q: %w: record %d without its value", l.name, ErrCorrupt, h)
			}
			b, err := decodeBlock(c.Key(), c.Value())
			if err != nil {
				return fmt.Errorf("timelog: %q: value row %x: %w", l.name, c.Key(), err)
			}
			j := i
			for j < len(hs) && hs[j] <= b.last() {
				if _, ok := b.find(hs[j]); !ok {
					return fmt.Errorf("timelog: %q: %w: record %d without its value", l.name, ErrCorrupt, hs[j])
				}
				j++
			}
			if j == i {
				return fmt.Errorf("timelog: %q: %w: record %d without its value", l.name, ErrCorrupt, h)
			}
			gone := hs[i:j]
			v, left := b.without(func(x uint64) bool {
				_, found := slices.BinarySearch(gone, x)
				return found
			})
			if !left {
				v = nil
			}
			changes = append(changes, change{b.key, v})
			i = j
		}
		return nil
	}()
	if err != nil {
		return err
	}
	for _, ch := range changes {
		if ch.value == nil {
			err = t.values.Delete(ch.key)
		} else {
			err = t.values.Put(ch.key, ch.value)
		}
		if err != nil {
			return fmt.Errorf("rewrite value block %x: %w", ch.key, err)
		}
	}
	return nil
}

// AppendValue writes one record with its value in the transaction and
// returns its handle (see Log.AppendValue).
func (w *Tx) AppendValue(ts int64, value []byte) (uint64, error) {
	return w.AppendValues([]int64{ts}, [][]byte{value})
}

// AppendValues writes records with their values in the transaction, all
// or nothing (see Log.AppendValues); they and their values commit or roll
// back with it. Handles of a rolled-back transaction are not reused by
// this Log.
func (w *Tx) AppendValues(ts []int64, values [][]byte) (first uint64, err error) {
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
		p := newPacker(l.store.MaxValueSize(), l.cfg.ValueBlockBytes)
		for i, v := range values {
			p.add(first+uint64(i), v, false)
		}
		if err := putRows(t, p.done()); err != nil {
			return err
		}
		return raiseHandle(t, first+uint64(len(ts)))
	})
	return first, err
}

func head(hs []uint64) []uint64 { return hs[:min(len(hs), 10)] }

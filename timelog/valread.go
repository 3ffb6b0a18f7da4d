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

// Value returns a copy of the value of handle h as the snapshot sees it:
// the value of every record the snapshot can return is there, even if the
// record was removed since. ErrValueNotFound if the snapshot has no value
// for h; ErrNoValues on a log without values; ErrCorrupt if the block
// holding it does not decode.
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
	defer s.fetchMu.Unlock()
	c, err := s.t.values.Cursor(kvstore.IterOptions{Reverse: true, Borrow: true})
	if err != nil {
		return nil, fromStore(fmt.Errorf("timelog: %q: value %d: %w", s.l.name, h, err))
	}
	defer c.Close()
	if !c.Seek(seekKey(h)) {
		if err := c.Err(); err != nil {
			return nil, fromStore(fmt.Errorf("timelog: %q: value %d: %w", s.l.name, h, err))
		}
		return nil, fmt.Errorf("timelog: %q: handle %d: %w", s.l.name, h, ErrValueNotFound)
	}
	b, err := decodeBlock(c.Key(), c.Value())
	if err != nil {
		return nil, fmt.Errorf("timelog: %q: value row %x: %w", s.l.name, c.Key(), err)
	}
	i, ok := b.find(h)
	if !ok {
		return nil, fmt.Errorf("timelog: %q: handle %d: %w", s.l.name, h, ErrValueNotFound)
	}
	return slices.Clone(b.value(i)), nil
}

// sees reports whether s can return the record of handle h, for a value
// known from outside the snapshot (the Objects cache): h is in one of its
// buffers, or below the handle counter stored in its transaction (a
// flush or transaction stores values and raises the counter above them
// together). Removed records are not this test's concern: the cache pins
// those and asks the snapshot itself.
func (s *Snapshot) sees(h uint64) (bool, error) {
	for _, r := range s.runs {
		if _, ok := r.value(h); ok {
			return true, nil
		}
	}
	s.fetchMu.Lock()
	defer s.fetchMu.Unlock()
	if !s.storedOK {
		n, err := getU64(s.t.meta, metaNextHandle)
		if err != nil {
			return false, fmt.Errorf("timelog: %q: %w", s.l.name, err)
		}
		s.storedH, s.storedOK = n, true
	}
	return h < s.storedH, nil
}

// valueCursor reads stored values for a range read. Records come mostly in
// handle order (appends take increasing handles), so the block of the last
// value usually holds the next one, else the row after it does: rows are
// read one after the other through a forward cursor, and a handle
// elsewhere is found by a descending seek to the greatest key <= it. The
// last valueCursorBlocks blocks read stay decoded, for records that
// arrived late (their handles jump ahead, then back).
type valueCursor struct {
	s        *Snapshot
	fwd, rev *kvstore.Cursor
	blocks   []*vblock // most recent first, at most valueCursorBlocks
	next     int       // the entry after the one read last, in blocks[0]
	fwdAt    *vblock   // the row fwd is on
	slab     []byte    // copies handed out are cut from it
}

const valueCursorBlocks = 16

// get returns a copy of the value of h.
func (vc *valueCursor) get(h uint64) ([]byte, error) {
	s := vc.s
	if err := s.check(); err != nil {
		return nil, err
	}
	for _, r := range s.runs {
		if v, ok := r.value(h); ok {
			return vc.clone(v), nil
		}
	}
	for i, b := range vc.blocks {
		if v, ok := vc.in(i, b, h); ok {
			return v, nil
		}
	}
	s.fetchMu.Lock()
	defer s.fetchMu.Unlock()
	// The row after the one fwd is on (or, if fwd is not placed, after the
	// block read last), read in order.
	var from *vblock
	if vc.fwdAt != nil && h > vc.fwdAt.last() {
		from = vc.fwdAt
	} else if vc.fwdAt == nil && len(vc.blocks) > 0 && h > vc.blocks[0].last() {
		from = vc.blocks[0]
	}
	if from != nil {
		var ok bool
		if from == vc.fwdAt {
			ok = vc.fwd.Next()
		} else if err := vc.open(&vc.fwd, false); err != nil {
			return nil, err
		} else {
			ok = vc.fwd.Seek(afterKey(from.key))
		}
		vc.fwdAt = nil
		if ok {
			b, err := vc.load(vc.fwd)
			if err != nil {
				return nil, err
			}
			vc.fwdAt = b
			if v, ok := vc.in(0, b, h); ok {
				return v, nil
			}
		} else if err := vc.fwd.Err(); err != nil {
			return nil, vc.fail(h, err)
		}
	}
	if err := vc.open(&vc.rev, true); err != nil {
		return nil, err
	}
	if !vc.rev.Seek(seekKey(h)) {
		if err := vc.rev.Err(); err != nil {
			return nil, vc.fail(h, err)
		}
		return nil, fmt.Errorf("timelog: %q: handle %d: %w", s.l.name, h, ErrValueNotFound)
	}
	b, err := vc.load(vc.rev)
	if err != nil {
		return nil, err
	}
	if v, ok := vc.in(0, b, h); ok {
		return v, nil
	}
	return nil, fmt.Errorf("timelog: %q: handle %d: %w", s.l.name, h, ErrValueNotFound)
}

// in returns a copy of the value of h if block b, blocks[i], holds it,
// and makes b the first of blocks.
func (vc *valueCursor) in(i int, b *vblock, h uint64) ([]byte, bool) {
	j := -1
	if i == 0 && vc.next < b.n && b.handle(vc.next) == h {
		j = vc.next
	} else if k, ok := b.find(h); ok {
		j = k
	} else {
		return nil, false
	}
	if i > 0 {
		copy(vc.blocks[1:i+1], vc.blocks[:i])
		vc.blocks[0] = b
	}
	vc.next = j + 1
	return vc.clone(b.value(j)), true
}

// clone copies v for the caller. Copies are cut from shared slabs (as
// the store's own scans copy rows): each is the caller's, capacity
// clipped, but keeps its slab reachable.
func (vc *valueCursor) clone(v []byte) []byte {
	if len(v) == 0 {
		return []byte{} // never nil, as values given are never nil
	}
	if cap(vc.slab)-len(vc.slab) < len(v) {
		vc.slab = make([]byte, 0, max(64<<10, len(v)))
	}
	n := len(vc.slab)
	vc.slab = append(vc.slab, v...)
	return vc.slab[n:len(vc.slab):len(vc.slab)]
}

func (vc *valueCursor) fail(h uint64, err error) error {
	return fmt.Errorf("timelog: %q: value %d: %w", vc.s.l.name, h, err)
}

func (vc *valueCursor) open(c **kvstore.Cursor, reverse bool) error {
	if *c != nil {
		return nil
	}
	cur, err := vc.s.t.values.Cursor(kvstore.IterOptions{Reverse: reverse, Borrow: true})
	if err != nil {
		return fmt.Errorf("timelog: %q: values: %w", vc.s.l.name, err)
	}
	*c = cur
	return nil
}

// load decodes the row c is on (reusing a block already decoded) and
// puts it first in blocks.
func (vc *valueCursor) load(c *kvstore.Cursor) (*vblock, error) {
	k, v := c.Key(), c.Value()
	for i, b := range vc.blocks {
		if bytes.Equal(b.key, k) {
			copy(vc.blocks[1:i+1], vc.blocks[:i])
			vc.blocks[0], vc.next = b, 0
			return b, nil
		}
	}
	// The least recently used block goes; its memory holds the new one
	// (the values handed out are copies).
	var b *vblock
	if len(vc.blocks) < valueCursorBlocks {
		b = &vblock{}
		vc.blocks = append(vc.blocks, b)
	} else if b = vc.blocks[len(vc.blocks)-1]; b == vc.fwdAt {
		vc.fwdAt = nil // fwd stays where it is, but seeks next time
	}
	buf := b.buf[:0]
	if cap(buf) < len(k)+len(v) {
		buf = make([]byte, 0, len(k)+len(v))
	}
	buf = append(append(buf, k...), v...)
	d, err := decodeBlock(buf[:len(k):len(k)], buf[len(k):])
	if err != nil {
		vc.blocks = vc.blocks[:len(vc.blocks)-1]
		return nil, fmt.Errorf("timelog: %q: value row %x: %w", vc.s.l.name, k, err)
	}
	*b = d
	b.buf = buf
	copy(vc.blocks[1:], vc.blocks[:len(vc.blocks)-1])
	vc.blocks[0], vc.next = b, 0
	return b, nil
}

func (vc *valueCursor) close() {
	vc.s.fetchMu.Lock()
	defer vc.s.fetchMu.Unlock()
	for _, c := range []*kvstore.Cursor{vc.fwd, vc.rev} {
		if c != nil {
			_ = c.Close()
		}
	}
	vc.fwd, vc.rev = nil, nil
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
				if errors.Is(err, ErrValueNotFound) { // a record without its value
					err = fmt.Errorf("%w: %v", ErrCorrupt, err)
				}
				yield(Entry{}, fromStore(err))
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
// that every value row decodes (its checksum included), that the rows do
// not overlap, that every stored record has its value and every value its
// record. It returns nil or an error wrapping ErrCorrupt that says what is
// wrong, or ErrClosed on a closed log. Buffered records are not looked at
// (Flush first to include them).
func (l *Log) IntegrityCheck(ctx context.Context) error {
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return fmt.Errorf("timelog: %q: %w", l.name, ErrClosed)
	}
	return fromStore(l.store.View(ctx, func(tx *kvstore.Tx) error {
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
		var prev vblock
		for e, err := range t.values.All() {
			if err != nil {
				return err
			}
			b, err := decodeBlock(e.Key, e.Value)
			if err != nil {
				return fmt.Errorf("timelog: %q: integrity: value row %x: %w", l.name, e.Key, err)
			}
			if prev.n > 0 && b.base <= prev.last() {
				return fmt.Errorf("timelog: %q: integrity: %w: value row %x overlaps row %x (handles up to %d)",
					l.name, ErrCorrupt, e.Key, prev.key, prev.last())
			}
			for i := 0; i < b.n; i++ {
				h := b.handle(i)
				if _, ok := handles[h]; !ok {
					orphans = append(orphans, h)
					continue
				}
				delete(handles, h)
			}
			prev = b
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
	}))
}

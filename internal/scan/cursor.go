package scan

import (
	"bytes"
	"errors"
	"iter"
)

// Bound is one end of a key range; a nil Key means unbounded.
type Bound struct {
	Key       []byte
	Inclusive bool
}

// Source is what a Cursor reads from; column families implement it.
type Source interface {
	// Scan returns the keys strictly inside lo..hi (honouring each bound's
	// Inclusive flag) in ascending order, or descending when desc is set.
	Scan(lo, hi Bound, desc bool) (Rows, error)
	// Close releases the source (its connection, pending work). The cursor
	// calls it exactly once.
	Close() error
}

// Rows is one open scan of a Source.
type Rows interface {
	Next() bool
	Key() []byte
	Value() []byte
	Err() error
	Close() error
}

// Stepper is a Rows that can also step without keeping the row: Step is
// Next, Key and Value in one call, the row not kept for Key and Value
// (which are then undefined until the next Next), for a loop that hands
// each row on at once (Run).
type Stepper interface {
	Step() (key, value []byte, ok bool)
}

// ErrClosed is reported by a Cursor used after Close, and by any call on a
// nil *Cursor (iterator.ErrClosedCursor is this value).
var ErrClosed = errors.New("snkv: cursor is closed")

// Spec selects what an iteration visits: iterator.Options, field for field
// (columnfamily converts one to the other), so that this package need not
// import the public one.
type Spec struct {
	Prefix, Start, End []byte
	Reverse, Borrow    bool
}

// PrefixEnd returns the smallest key greater than every key that starts
// with prefix, or nil when there is none (the prefix is empty or all 0xFF).
func PrefixEnd(prefix []byte) []byte { return appendPrefixEnd(nil, prefix) }

// appendPrefixEnd is PrefixEnd written at the end of dst (which must not
// overlap prefix), or nil.
func appendPrefixEnd(dst, prefix []byte) []byte {
	// Not bytes.TrimRight: its cutset is UTF-8, where "\xff" is the
	// replacement rune, which every invalid byte (0x80-0xFF) decodes to.
	end := prefix
	for len(end) > 0 && end[len(end)-1] == 0xff {
		end = end[:len(end)-1]
	}
	if len(end) == 0 {
		return nil
	}
	out := append(dst, end...)
	out[len(out)-1]++
	return out
}

// Range turns a Spec into the lower and upper bound of the keys visited.
// Empty reports that no key can satisfy them.
func (o Spec) Range() (lo, hi Bound, empty bool) { return o.rangeIn(nil) }

// rangeIn is Range with the end of a prefix written at the end of buf
// (a cursor's own array: no allocation for a short prefix).
func (o Spec) rangeIn(buf []byte) (lo, hi Bound, empty bool) {
	if len(o.Start) > 0 {
		lo = Bound{Key: o.Start, Inclusive: true}
	}
	if o.End != nil {
		hi = Bound{Key: o.End}
		if len(o.End) == 0 {
			return lo, hi, true // nothing sorts below the empty key
		}
	}
	if len(o.Prefix) > 0 {
		lo = maxLower(lo, Bound{Key: o.Prefix, Inclusive: true})
		if end := appendPrefixEnd(buf, o.Prefix); end != nil {
			hi = minUpper(hi, Bound{Key: end})
		}
	}
	return lo, hi, isEmpty(lo, hi)
}

// maxLower returns the tighter of two lower bounds.
func maxLower(a, b Bound) Bound { return tighter(a, b, 1) }

// minUpper returns the tighter of two upper bounds.
func minUpper(a, b Bound) Bound { return tighter(a, b, -1) }

// tighter returns the tighter of two bounds on the same side: the one
// whose key compares to the other's as want says (1: the larger, for lower
// bounds; -1: the smaller, for upper bounds), or on the same key the
// exclusive one. A bound with a nil key is none.
func tighter(a, b Bound, want int) Bound {
	if a.Key == nil {
		return b
	}
	if b.Key == nil {
		return a
	}
	switch bytes.Compare(a.Key, b.Key) {
	case want:
		return a
	case -want:
		return b
	}
	return Bound{Key: a.Key, Inclusive: a.Inclusive && b.Inclusive}
}

func isEmpty(lo, hi Bound) bool {
	if lo.Key == nil || hi.Key == nil {
		return false
	}
	c := bytes.Compare(lo.Key, hi.Key)
	return c > 0 || (c == 0 && !(lo.Inclusive && hi.Inclusive))
}

// Cursor positions a repositionable iteration over a Source: the logic
// behind iterator.Cursor, which holds one. Iteration order is ascending, or
// descending with Spec.Reverse; Next moves in that order and Prev against
// it. Each repositioning opens a new scan of the source between the bounds
// it works out; a step in the direction of the open scan reads its next
// row. A Cursor is not safe for concurrent use.
type Cursor struct {
	src      Source
	lo, hi   Bound
	reverse  bool
	borrow   bool // key and val point into the source's memory
	empty    bool
	rows     Rows
	rowsDesc bool
	offEnd   bool // the last open found an empty range: steps in rowsDesc stay off the end
	key, val []byte
	valid    bool
	err      error
	closed   bool
	end      [32]byte // the end of a short prefix (hi's key)
}

// New returns an unpositioned cursor over src limited by spec.
func New(src Source, spec Spec) *Cursor {
	c := &Cursor{}
	c.Init(src, spec)
	return c
}

// Init makes c an unpositioned cursor over src limited by spec (for a
// Cursor held in another struct: one allocation, not two).
func (c *Cursor) Init(src Source, spec Spec) {
	*c = Cursor{src: src, reverse: spec.Reverse, borrow: spec.Borrow}
	c.lo, c.hi, c.empty = spec.rangeIn(c.end[:0])
}

// NewIteratorCursor returns a new *iterator.Cursor over src limited by
// spec, as an any: package iterator, which imports this one, sets it at
// init, and columnfamily asserts the type. It is how a column family builds
// the public cursor without the public package exporting a constructor.
var NewIteratorCursor func(src Source, spec Spec) any

// First positions the cursor on the first key in iteration order.
func (c *Cursor) First() bool { return c != nil && c.open(c.lo, c.hi, c.reverse) }

// Last positions the cursor on the last key in iteration order.
func (c *Cursor) Last() bool { return c != nil && c.open(c.lo, c.hi, !c.reverse) }

// Seek positions the cursor on the first key at or after key in iteration
// order: the smallest key >= key, or with Reverse the largest key <= key.
func (c *Cursor) Seek(key []byte) bool {
	if c == nil {
		return false
	}
	b := Bound{Key: key, Inclusive: true}
	if c.reverse {
		return c.open(c.lo, minUpper(c.hi, b), true)
	}
	return c.open(maxLower(c.lo, b), c.hi, false)
}

// Next moves to the next key in iteration order. On an unpositioned cursor
// it is First.
func (c *Cursor) Next() bool { return c != nil && c.step(c.reverse) }

// Prev moves to the previous key in iteration order. On an unpositioned
// cursor it is Last.
func (c *Cursor) Prev() bool { return c != nil && c.step(!c.reverse) }

// Valid reports whether the cursor is on a key.
func (c *Cursor) Valid() bool { return c != nil && c.valid }

// Key returns the current key, or nil. The slice belongs to the caller
// (with Spec.Borrow: valid until the cursor moves or closes).
func (c *Cursor) Key() []byte {
	if c == nil {
		return nil
	}
	return c.key
}

// Value returns the current value, or nil. The slice belongs to the caller
// (with Spec.Borrow: valid until the cursor moves or closes); an empty
// value is an empty, non-nil slice.
func (c *Cursor) Value() []byte {
	if c == nil {
		return nil
	}
	return c.val
}

// Err returns the error that stopped the cursor, if any. A cursor that ran
// off the end of its range has no error.
func (c *Cursor) Err() error {
	if c == nil {
		return ErrClosed
	}
	return c.err
}

// Close releases the cursor. It is safe to call more than once.
func (c *Cursor) Close() error {
	if c == nil {
		return ErrClosed
	}
	if c.closed {
		return nil
	}
	c.closed = true
	c.valid, c.key, c.val = false, nil, nil
	var rowsErr error
	if c.rows != nil {
		// Rows that failed report their error again on Close; Err already
		// has it, so it is not reported twice.
		if err := c.rows.Close(); c.err == nil {
			rowsErr = err
		}
		c.rows = nil
	}
	srcErr := c.src.Close()
	if rowsErr == nil {
		return srcErr // without errors.Join's allocation
	}
	return errors.Join(rowsErr, srcErr)
}

// step advances one key physically ascending (desc == false) or descending.
func (c *Cursor) step(desc bool) bool {
	if c.closed {
		return c.fail(ErrClosed)
	}
	if c.err != nil {
		return c.fail(nil)
	}
	if c.rows != nil && c.rowsDesc == desc {
		return c.advance()
	}
	if c.offEnd && c.rowsDesc == desc {
		return false
	}
	if !c.valid {
		// Unpositioned, or ran off one end: enter the range from the end
		// the step starts at.
		return c.open(c.lo, c.hi, desc)
	}
	from := Bound{Key: c.key}
	if c.borrow {
		// The borrowed key dies with the rows that open closes.
		from.Key = bytes.Clone(c.key)
	}
	if desc {
		return c.open(c.lo, minUpper(c.hi, from), true)
	}
	return c.open(maxLower(c.lo, from), c.hi, false)
}

func (c *Cursor) open(lo, hi Bound, desc bool) bool {
	if c.closed {
		return c.fail(ErrClosed)
	}
	if c.err != nil {
		return c.fail(nil)
	}
	if c.rows != nil {
		err := c.rows.Close()
		c.rows = nil
		if err != nil {
			return c.fail(err)
		}
	}
	if c.empty || isEmpty(lo, hi) {
		c.valid, c.key, c.val = false, nil, nil
		c.offEnd, c.rowsDesc = true, desc
		return false
	}
	rows, err := c.src.Scan(lo, hi, desc)
	if err != nil {
		return c.fail(err)
	}
	c.rows, c.rowsDesc, c.offEnd = rows, desc, false
	return c.advance()
}

func (c *Cursor) advance() bool {
	if c.rows.Next() {
		c.key, c.val, c.valid = c.rows.Key(), c.rows.Value(), true
		return true
	}
	c.valid, c.key, c.val = false, nil, nil
	if err := c.rows.Err(); err != nil {
		return c.fail(err)
	}
	return false
}

func (c *Cursor) fail(err error) bool {
	if err != nil && c.err == nil {
		c.err = err
	}
	c.valid, c.key, c.val = false, nil, nil
	return false
}

// Seq adapts a cursor factory to a range-over-func iterator of entries of
// type E (iterator.Entry). Each element is an entry and a nil error; if the
// iteration fails, the last element carries the error (and an empty
// entry), so a loop never ends silently on failure. The cursor is closed
// when the loop ends, breaks or panics.
func Seq[E ~struct{ Key, Value []byte }](open func() (*Cursor, error)) iter.Seq2[E, error] {
	return func(yield func(E, error) bool) {
		c, err := open()
		if err != nil {
			yield(E{}, err)
			return
		}
		Run(c, yield)
	}
}

// Run is the body of Seq for the cursor c: it yields every entry of c,
// then c's error, if any. It closes c, also when the loop breaks or its
// body panics (the panic goes on up).
func Run[E ~struct{ Key, Value []byte }](c *Cursor, yield func(E, error) bool) {
	finished := false
	defer func() {
		if !finished { // the loop broke or panicked
			_ = c.Close()
		}
	}()
	ok := c.First()
	if ok {
		if !yield(E{Key: c.key, Value: c.val}, nil) {
			return
		}
		if st, isStepper := c.rows.(Stepper); isStepper {
			// The rest of the range from the open scan, each row straight
			// to the loop (see Stepper): the cursor is off its row meanwhile.
			c.valid, c.key, c.val = false, nil, nil
			for {
				k, v, more := st.Step()
				if !more {
					break
				}
				if !yield(E{Key: k, Value: v}, nil) {
					return
				}
			}
			if err := c.rows.Err(); err != nil {
				c.fail(err)
			}
			ok = false
		}
	}
	for ok = ok && c.Next(); ok; ok = c.Next() {
		if !yield(E{Key: c.key, Value: c.val}, nil) {
			return
		}
	}
	finished = true
	if err := c.Err(); err != nil {
		yield(E{}, errors.Join(err, c.Close()))
	} else if err := c.Close(); err != nil {
		yield(E{}, err)
	}
}

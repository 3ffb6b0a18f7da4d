package iterator

import "github.com/snkv-go/snkv/internal/scan"

// Options selects what an iteration visits. The zero value visits every key
// in ascending order. Prefix, Start and End combine: a key is visited when it
// has the prefix and lies in [Start, End).
type Options struct {
	// Prefix limits the iteration to keys that start with it. A prefix of
	// 0xFF bytes is handled exactly.
	Prefix []byte
	// Start is the inclusive lower bound; nil means no lower bound.
	Start []byte
	// End is the exclusive upper bound; nil means no upper bound.
	End []byte
	// Reverse visits keys in descending order.
	Reverse bool
	// Borrow makes the iteration allocation-free: the Key and Value of a
	// Cursor, and the slices of each Entry, point into the store's memory
	// and are valid only until the cursor steps again (Next, Prev, First,
	// Last, Seek) or closes, or the loop body returns. Copy what you keep;
	// never write to them. In a write transaction Borrow is ignored: a write
	// in the loop would end the statement the rows point into. Without
	// Borrow (the default) every key and value
	// is a copy that belongs to the caller; copies of consecutive rows of up
	// to 1 KiB share blocks (one allocation per block, a block begun by one
	// loop finished by the next ones; the first block 4 KiB, the next ones
	// 64 KiB), so keeping one entry keeps at most its block, 64 KiB, alive
	// (a larger row: its own copy).
	Borrow bool
}

// Entry is one key-value pair. Both slices belong to the caller, unless the
// iteration was opened with Options.Borrow.
type Entry struct {
	Key   []byte
	Value []byte
}

// ErrClosedCursor is reported by a Cursor used after Close, and by any
// call on a nil *Cursor.
var ErrClosedCursor = scan.ErrClosed

// Cursor is an explicit, repositionable iterator over one column family.
// Iteration order is ascending, or descending with Options.Reverse; Next
// moves in that order and Prev against it. All reads of one cursor see one
// consistent snapshot. A Cursor is not safe for concurrent use; Close it to
// release its connection. Cursors come from ColumnFamily.Cursor (and the
// Cursor method of kvstore's Store and Tx).
type Cursor struct {
	c scan.Cursor
}

func init() {
	scan.NewIteratorCursor = func(src scan.Source, spec scan.Spec) any {
		c := &Cursor{}
		c.c.Init(src, spec)
		return c
	}
}

// First positions the cursor on the first key in iteration order and
// reports whether there is one.
func (c *Cursor) First() bool { return c != nil && c.c.First() }

// Last positions the cursor on the last key in iteration order and reports
// whether there is one.
func (c *Cursor) Last() bool { return c != nil && c.c.Last() }

// Seek positions the cursor on the first key at or after key in iteration
// order: the smallest key >= key, or with Reverse the largest key <= key.
// It reports whether there is one.
func (c *Cursor) Seek(key []byte) bool { return c != nil && c.c.Seek(key) }

// Next moves to the next key in iteration order. On an unpositioned cursor
// it is First. It reports whether the cursor is on a key.
func (c *Cursor) Next() bool { return c != nil && c.c.Next() }

// Prev moves to the previous key in iteration order. On an unpositioned
// cursor it is Last. It reports whether the cursor is on a key.
func (c *Cursor) Prev() bool { return c != nil && c.c.Prev() }

// Valid reports whether the cursor is on a key.
func (c *Cursor) Valid() bool { return c != nil && c.c.Valid() }

// Key returns the current key, or nil. The slice belongs to the caller
// (with Options.Borrow: valid until the cursor moves or closes).
func (c *Cursor) Key() []byte {
	if c == nil {
		return nil
	}
	return c.c.Key()
}

// Value returns the current value, or nil. The slice belongs to the caller
// (with Options.Borrow: valid until the cursor moves or closes); an empty
// value is an empty, non-nil slice.
func (c *Cursor) Value() []byte {
	if c == nil {
		return nil
	}
	return c.c.Value()
}

// Err returns the error that stopped the cursor, if any: ErrClosedCursor
// after Close (or on a nil Cursor). A cursor that ran off the end of its
// range has no error.
func (c *Cursor) Err() error {
	if c == nil {
		return ErrClosedCursor
	}
	return c.c.Err()
}

// Close releases the cursor: its scan, its snapshot and its connection. It
// is safe to call more than once (nil after the first); a nil Cursor gives
// ErrClosedCursor.
func (c *Cursor) Close() error {
	if c == nil {
		return ErrClosedCursor
	}
	return c.c.Close()
}

// PrefixEnd returns the smallest key greater than every key that starts
// with prefix (trailing 0xFF bytes dropped, the last remaining byte
// incremented), or nil when there is none (the prefix is empty or all
// 0xFF): the End of Options that bounds a prefix, and the end of a range
// delete of one (ColumnFamily.DeleteRange(ctx, prefix, PrefixEnd(prefix))).
// It returns a new slice. Pure; O(len(prefix)).
func PrefixEnd(prefix []byte) []byte { return scan.PrefixEnd(prefix) }

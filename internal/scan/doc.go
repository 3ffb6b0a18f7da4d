// Package scan is the plumbing of snkv's iterations: the key bounds an
// iteration works out from its options (Spec.Range, PrefixEnd), the Source
// and Rows a column family implements to feed it, the Cursor that
// positions and repositions an iteration over a Source (First, Last, Seek,
// Next, Prev, each change of direction a new scan between new bounds), and
// Seq, which turns a cursor into a range-over-func loop.
//
// It knows nothing of SQL or of column families. The public types are in
// package iterator (Options, Entry, Cursor, ErrClosedCursor); a
// column family builds an iterator.Cursor through NewIteratorCursor, which
// package iterator sets at init.
package scan

// Package iterator defines how snkv walks a column family in key order:
// the Options that select a range (prefix, [Start, End), direction), the
// explicit Cursor with Seek/Next/Prev, and the range-over-func form that
// yields each Entry with an error so that a failure never ends a loop
// silently.
//
// Cursors are created by columnfamily (ColumnFamily.Cursor); this package
// holds the positioning logic and knows nothing about SQL.
package iterator

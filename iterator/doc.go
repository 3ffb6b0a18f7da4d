// Package iterator defines how snkv walks a column family in key order:
// the Options that select a range (prefix, [Start, End), direction), the
// explicit Cursor with First/Last/Seek/Next/Prev, and the range-over-func
// form (Seq) that yields each Entry with an error so that a failure never
// ends a loop silently:
//
//	for e, err := range cf.Prefix(p) {
//		if err != nil {
//			return err
//		}
//		use(e.Key, e.Value)
//	}
//
// Every key and value handed out is a fresh slice owned by the caller. A
// cursor reads one consistent snapshot until it is closed.
//
// Cursors are created by columnfamily (ColumnFamily.Cursor); this package
// holds the positioning logic and knows nothing about SQL.
package iterator

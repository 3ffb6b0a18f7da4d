// Package iterator holds the types of snkv's iterations in key order: the
// Options that select what to visit (prefix, [Start, End), direction,
// borrowed or copied slices), the Entry each step yields, and the explicit
// Cursor with First, Last, Seek, Next and Prev. The iterations themselves
// are methods of a column family (and of kvstore's Store and Tx, for the
// default one): Scan, All, Prefix, Range and Backward yield each Entry with
// an error, so that a failure never ends a loop silently:
//
//	for e, err := range cf.Prefix(p) {
//		if err != nil {
//			return err
//		}
//		use(e.Key, e.Value)
//	}
//
// Every key and value handed out is a fresh slice owned by the caller,
// unless the iteration was opened with Options.Borrow: then they point into
// the store's memory and are valid until the next step. A cursor reads one
// consistent snapshot until it is closed.
//
// Applications meet these types through kvstore (kvstore.IterOptions,
// kvstore.Entry, kvstore.Cursor are aliases of them).
package iterator

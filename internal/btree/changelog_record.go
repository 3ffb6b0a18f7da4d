package btree

// ChangeRow is a row of the change log (internal/changelog, docs/format.md
// "The change log") but its sequence, which is the row's rowid.
type ChangeRow struct {
	Tx, AtMs int64
	CF       string
	Op       int64
	Key      []byte // nil: NULL
	Value    []byte // nil: NULL
	Expiry   int64  // when HasExpiry; NULL otherwise
	// HasExpiry says Expiry is set.
	HasExpiry bool
}

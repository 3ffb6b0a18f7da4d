package kvstore

// CreateColumnFamily creates the column family name inside the write
// transaction tx and returns its handle, which, like CreateColumnFamily's
// on the store, is not bound to tx: write through tx.CF(h) until tx ends.
// The column family is created with tx: visible to other transactions
// once tx commits, and never written to the file at all if tx rolls back
// (the handle then reports ErrNotFound), so that a load into a new column
// family can be all or nothing. It fails with ErrExists if the column
// family exists (names compare without regard to ASCII case),
// ErrInvalidName or ErrReservedName for a bad name, ErrReadOnlyTx in a
// read-only transaction, and ErrInvalidArgument on a nil Tx. Cost: a few
// statements (the catalog row, the table, its view and trigger), as for
// Store.CreateColumnFamily, inside tx.
func (tx *Tx) CreateColumnFamily(name string) (*ColumnFamily, error) {
	if tx == nil {
		return nil, errNilTx
	}
	return handle2(tx.store.reg.CreateIn(tx.tx, name))
}

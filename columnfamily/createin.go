package columnfamily

import "github.com/snkv-go/snkv/internal/engine"

// CreateIn creates the column family name inside the write transaction tx
// and returns its handle (not bound to tx). The column family exists for
// others once tx commits; if tx rolls back, nothing of it was ever
// written, and the handle reports ErrNotFound. It fails as Create does,
// and with ErrReadOnlyTx in a read-only transaction.
func (r *Registry) CreateIn(tx *engine.Tx, name string) (*ColumnFamily, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if err := tx.Check(true); err != nil {
		return nil, err
	}
	cf, err := r.createOn(tx.Ctx(), tx, name)
	if err != nil {
		return nil, engine.Wrap(tx.Ctx(), "create column family", err)
	}
	return cf, nil
}

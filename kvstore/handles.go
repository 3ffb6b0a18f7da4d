package kvstore

import (
	"iter"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/family"
)

// forward_store.go and forward_tx.go give Store and Tx every method of
// ColumnFamily, for the default column family.
//
//go:generate go run ../internal/forwardgen

// The public handles of the catalog's column families. Package
// columnfamily builds them (family.NewHandle, family.BindHandle, set at its
// init): it exports no constructor that takes internal types.

// handleOf returns the handle of f (nil for a nil f).
func handleOf(f *family.Family) *ColumnFamily {
	return family.NewHandle(f).(*ColumnFamily)
}

// handle2 is handleOf of a catalog call's result: nil with the error.
func handle2(f *family.Family, err error) (*ColumnFamily, error) {
	if err != nil {
		return nil, err
	}
	return handleOf(f), nil
}

// bindHandle returns cf (nil included) bound to tx; see Tx.CF.
func bindHandle(cf *ColumnFamily, tx *engine.Tx) *ColumnFamily {
	return family.BindHandle(cf, tx).(*ColumnFamily)
}

// handle is the default column family's handle; nil for a nil Store (its
// accessors then give zero values).
func (s *Store) handle() *ColumnFamily {
	if s == nil {
		return nil
	}
	return s.cf
}

// Default returns the default column family bound to the transaction: the
// handle the Tx methods named after ColumnFamily's act on (nil for a nil
// Tx). It is done with the transaction, like every handle Tx.CF returns.
func (tx *Tx) Default() *ColumnFamily { return tx.handle() }

// handle is the transaction's default column family; nil for a nil Tx.
func (tx *Tx) handle() *ColumnFamily {
	if tx == nil {
		return nil
	}
	return tx.cf
}

// errSeq is an iteration that yields err once.
func errSeq(err error) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) { yield(Entry{}, err) }
}

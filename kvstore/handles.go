package kvstore

import (
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/family"
)

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

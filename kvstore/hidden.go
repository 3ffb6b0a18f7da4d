package kvstore

import (
	"context"

	"github.com/snkv-go/snkv/internal/layout"
)

// Hidden tables: the extension point for layers built on the store.
//
// A layer above kvstore (package timelog, for one) keeps its data in hidden
// tables: key-value tables of the same shape as a column family, created
// through the same code path, named "__snkv_" + kind + ":" + name and
// registered in the catalog with their own kind. They are never returned by
// ListColumnFamilies and cannot be opened, created or dropped as column
// families. The handle they come with is an ordinary *ColumnFamily: use it
// on its own, or inside a transaction with tx.CF(h), and combine it with
// Tx.OnCommit to act only on what committed.
//
// kind is 1 to 32 bytes of [a-z0-9_] other than "kv" (the kind of column
// families); name is 1 to 255 bytes of UTF-8 without NUL. Bad ones fail with
// ErrInvalidName.

// HiddenTableName returns the SQLite name of the hidden table name of kind,
// for documentation and tools: "__snkv_" + kind + ":" + name.
func HiddenTableName(kind, name string) string { return layout.HiddenTableName(kind, name) }

// HiddenOption is an option of CreateHiddenTable.
type HiddenOption uint8

// HiddenSealed makes a hidden table's values sealed when the store is
// encrypted, like a column family's (a time series' values are). Without
// it, a hidden table is kept in the clear in an encrypted store: the
// layer's structure (a time series' timestamps and handles) stays readable
// in the sqlite3 shell. The choice is recorded in the file.
const HiddenSealed HiddenOption = 1

// CreateHiddenTable creates the hidden table name of kind inside the write
// transaction tx and returns its handle. It fails with ErrExists if it
// exists, ErrReadOnlyTx in a read-only transaction, ErrVersion when
// HiddenSealed is asked of a version-1 store (Upgrade it first),
// ErrInvalidArgument on a nil Tx. The table (and the handle) vanish if tx
// rolls back.
func (tx *Tx) CreateHiddenTable(kind, name string, opts ...HiddenOption) (*ColumnFamily, error) {
	if tx == nil {
		return nil, errNilTx
	}
	sealed := false
	for _, o := range opts {
		if o == HiddenSealed {
			sealed = true
		}
	}
	return handle2(tx.store.reg.CreateHidden(tx.tx, kind, name, sealed))
}

// DropHiddenTable drops the hidden table name of kind, with all its rows,
// inside the write transaction tx. Handles to it fail with ErrNotFound once
// tx commits. A missing table gives ErrNotFound; a nil Tx
// ErrInvalidArgument.
func (tx *Tx) DropHiddenTable(kind, name string) error {
	if tx == nil {
		return errNilTx
	}
	return tx.store.reg.DropHidden(tx.tx, kind, name)
}

// OpenHiddenTable returns the handle of the existing hidden table name of
// kind, or ErrNotFound (ErrInvalidArgument for a nil Store or ctx).
func (s *Store) OpenHiddenTable(ctx context.Context, kind, name string) (*ColumnFamily, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return handle2(s.reg.OpenHidden(ctx, kind, name))
}

// ListHiddenTables returns the names of the hidden tables of kind (as given
// to CreateHiddenTable), sorted bytewise (ErrInvalidArgument for a nil
// Store or ctx).
func (s *Store) ListHiddenTables(ctx context.Context, kind string) ([]string, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	return s.reg.ListHidden(ctx, kind)
}

// ReadOnly reports whether the store was opened read-only (false for a nil
// Store).
func (s *Store) ReadOnly() bool { return s != nil && s.opts.ReadOnly }

// Package layer is the plumbing of the layers built on kvstore (timelog,
// vector, and the next one): hidden tables, the registration of a layer's
// integrity check and repair, and the store's expiry rules. It is internal:
// applications see none of it, and kvstore's exported API keeps only what
// an application calls. kvstore does not import its layers; it installs
// its implementations of these operations through package bridge, and
// this package gives them to the layers with kvstore's types.
//
// The convention a layer follows (context on calls that can block, the
// In(tx) shape, errors, registration, expiry) is written in
// docs/architecture.md, "Writing a layer".
//
// # Hidden tables
//
// A layer keeps its data in hidden tables: key-value tables of the same
// shape as a column family, created through the same code path, named
// "__snkv_" + kind + ":" + name and registered in the catalog with their
// own kind. They are never returned by ListColumnFamilies and cannot be
// opened, created or dropped as column families. The handle they come with
// is an ordinary *kvstore.ColumnFamily: use it on its own, or inside a
// transaction with tx.CF(h), and combine it with Tx.OnCommit to act only
// on what committed.
//
// kind is 1 to 32 bytes of [a-z0-9_] other than "kv" (the kind of column
// families); name is 1 to 255 bytes of UTF-8 without NUL. Bad ones fail
// with kvstore.ErrInvalidName.
package layer

import (
	"context"
	"fmt"
	"time"

	"github.com/snkv-go/snkv/internal/changelog"
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/layer/bridge"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/kvstore"
)

// HiddenTableName returns the SQLite name of the hidden table name of
// kind, for documentation and tools: "__snkv_" + kind + ":" + name.
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
func CreateHiddenTable(tx *kvstore.Tx, kind, name string, opts ...HiddenOption) (*kvstore.ColumnFamily, error) {
	sealed := false
	for _, o := range opts {
		if o == HiddenSealed {
			sealed = true
		}
	}
	return handle(bridge.Store.Create(nilTx(tx), kind, name, sealed))
}

// DropHiddenTable drops the hidden table name of kind, with all its rows,
// inside the write transaction tx. Handles to it fail with ErrNotFound
// once tx commits. A missing table gives ErrNotFound; a nil Tx
// ErrInvalidArgument.
func DropHiddenTable(tx *kvstore.Tx, kind, name string) error {
	return bridge.Store.Drop(nilTx(tx), kind, name)
}

// OpenHiddenTable returns the handle of the existing hidden table name of
// kind, or ErrNotFound (ErrInvalidArgument for a nil Store or ctx).
func OpenHiddenTable(ctx context.Context, s *kvstore.Store, kind, name string) (*kvstore.ColumnFamily, error) {
	return handle(bridge.Store.Open(ctx, nilStore(s), kind, name))
}

// ListHiddenTables returns the names of the hidden tables of kind (as
// given to CreateHiddenTable), sorted bytewise (ErrInvalidArgument for a
// nil Store or ctx).
func ListHiddenTables(ctx context.Context, s *kvstore.Store, kind string) ([]string, error) {
	return bridge.Store.List(ctx, nilStore(s), kind)
}

// SealHiddenTable marks the hidden table name of kind sealed, for a layer
// whose table was made before it could ask for that with HiddenSealed; in
// an encrypted store the values it holds are sealed now, in batches (rows
// it cannot read are left as they were and reported with a
// *kvstore.BadRowsError). It does nothing to a table already sealed. It
// runs one at a time with the store's conversions (Encrypt, Rekey, …).
func SealHiddenTable(ctx context.Context, s *kvstore.Store, kind, name string) error {
	return bridge.Store.Seal(ctx, nilStore(s), kind, name)
}

// nilTx and nilStore pass a nil pointer on as a nil any, which kvstore's
// side reads as a nil handle.
func nilTx(tx *kvstore.Tx) any {
	if tx == nil {
		return nil
	}
	return tx
}

func nilStore(s *kvstore.Store) any {
	if s == nil {
		return nil
	}
	return s
}

func handle(h any, err error) (*kvstore.ColumnFamily, error) {
	if err != nil {
		return nil, err
	}
	cf, _ := h.(*kvstore.ColumnFamily)
	return cf, nil
}

// Layer is the maintenance a layer registers for its kind of hidden
// tables.
type Layer struct {
	// Check returns one line per problem found in the layer's tables of
	// store (none: nil). The error is for a check that could not run. It
	// must only read.
	Check func(ctx context.Context, store *kvstore.Store) ([]string, error)
	// Repair mends what Check finds and returns one line per repair made.
	// Nil: the layer repairs nothing.
	Repair func(ctx context.Context, store *kvstore.Store) ([]string, error)
}

// Register registers the maintenance of the hidden tables of kind, from
// the layer package's init. Store.CheckIntegrity, IntegrityCheck and
// Repair then run it, after their own work, on every store that has
// hidden tables of that kind. A second registration of the same kind
// replaces the first. It panics for a kind that is not 1 to 32 bytes of
// [a-z0-9_] or is "kv", or a Layer without Check: both are programming
// errors.
func Register(kind string, l Layer) {
	m := bridge.Maintenance{}
	if l.Check != nil {
		check := l.Check
		m.Check = func(ctx context.Context, s any) ([]string, error) { return check(ctx, s.(*kvstore.Store)) }
	}
	if l.Repair != nil {
		repair := l.Repair
		m.Repair = func(ctx context.Context, s any) ([]string, error) { return repair(ctx, s.(*kvstore.Store)) }
	}
	bridge.Register(kind, m)
}

// ExpiryMs returns the expiry, in milliseconds since the Unix epoch, that
// the store's TTL writes give a key written at now: with time-to-live d
// when d is not 0 (PutTTL's rules: rounded up to the millisecond; a
// negative d, or one past the latest expiry possible, is ErrInvalidTTL),
// else at expiry time at when it is not zero (PutExpireAt's rules: in the
// future, rounded up), else 0, no expiry. An expiry that a clock before
// 1970 puts at or before the epoch is ErrClockRange. A layer that keeps
// expiries of its own (vector) uses it, with Store.Clock, so that it
// follows the store's rules.
func ExpiryMs(now time.Time, d time.Duration, at time.Time) (int64, error) {
	switch {
	case d != 0:
		return expiry.ExpiryFromTTL(expiry.Ms(now), d)
	case !at.IsZero():
		return expiry.ExpiryFromTime(expiry.Ms(now), at)
	}
	return 0, nil
}

// NowMs returns the time of store's clock (Store.Clock) in milliseconds
// since the Unix epoch, as the store's expiry decisions read it (limited
// to the range an expiry can have).
func NowMs(store *kvstore.Store) int64 { return expiry.NowMs(store.Clock()) }

// Expired reports whether the expiry expMs (0: none) has passed at nowMs,
// by the rule of the store's TTL: a key is gone from the millisecond of
// its expiry on.
func Expired(expMs, nowMs int64) bool { return expMs != 0 && expiry.Expired(expMs, nowMs) }

// Engine returns the store's engine and its change feed's recording state,
// for package changefeed.
func Engine(ctx context.Context, s *kvstore.Store) (*engine.DB, *changelog.Feeds, error) {
	if s == nil {
		return nil, nil, fmt.Errorf("%w: nil store", kvstore.ErrInvalidArgument)
	}
	db, fs, err := bridge.Store.Engine(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	return db.(*engine.DB), fs.(*changelog.Feeds), nil
}

// EngineTx returns the engine's transaction under tx, for package
// changefeed.
func EngineTx(tx *kvstore.Tx) (*engine.Tx, error) {
	if tx == nil {
		return nil, fmt.Errorf("%w: nil transaction", kvstore.ErrInvalidArgument)
	}
	t, err := bridge.Store.EngineTx(tx)
	if err != nil {
		return nil, err
	}
	return t.(*engine.Tx), nil
}

// TxStore returns the store tx belongs to (nil for a nil tx), for package
// changefeed: its clock stamps what a transaction saves.
func TxStore(tx *kvstore.Tx) *kvstore.Store {
	s, _ := bridge.Store.TxStore(tx).(*kvstore.Store)
	return s
}

package family

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/snkv-go/snkv/internal/changelog"
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/internal/rowcodec"
	"github.com/snkv-go/snkv/internal/seal"
)

// Env is what every column family of a store shares.
type Env struct {
	DB           *engine.DB
	Clock        expiry.Clock
	MaxValueSize int
	Feeds        *changelog.Feeds // the change feed's recording (internal/changelog)
	// Seal is the encryption state the row codec follows; nil for a store
	// without encryption.
	Seal atomic.Pointer[seal.State]
	// past holds every state Seal held with the header it went with, for
	// reads whose snapshot began before a conversion ended
	// (internal/rowcodec/seal.go).
	past rowcodec.History
}

// Follow makes the row codec follow st (nil: no encryption), whose header,
// as stored in the file, is header: a read whose snapshot holds that header
// reads with st even after the store has moved on.
func (e *Env) Follow(st *seal.State, header []byte) {
	if st != nil {
		e.past.Add(header, st)
	}
	e.Seal.Store(st)
}

// Followed returns the state the store followed with encryption header
// header, or nil if it never followed that header.
func (e *Env) Followed(header []byte) *seal.State { return e.past.Get(header) }

// Family is the state all handles of one column family (or hidden table)
// share: a Registry of package catalog keeps one per name.
type Family struct {
	Env   *Env
	Name  string // as stored in the catalog
	Stamp int64  // the catalog's created_ms of the column family this state is for
	// NameArg and StampArg are Name and Stamp boxed once, so that binding
	// them to every single put costs no allocation.
	NameArg, StampArg any
	// The layout of the column family's objects and its SQL. Writers use
	// writing and readers reading: Upgrade switches writing inside the
	// transaction that changes the layout (the writer is exclusive, so no
	// other write sees the switch early) and reading once that transaction
	// has committed (SwitchShape).
	writing, reading atomic.Pointer[Shape]
	// TTL is set when the TTL tables exist (as far as this process knows).
	TTL atomic.Bool
	// Dropped is set once the column family is known to be dropped (or
	// replaced by one of the same name): its handles then fail.
	Dropped atomic.Bool
	// Sealed is set when the values are sealed in an encrypted store
	// (every column family; a hidden table when marked so).
	Sealed atomic.Bool
	// Horizon lets a purge that finds nothing expired skip its read
	// until a commit or the clock passes the earliest expiry it saw.
	Horizon expiry.Horizon
}

// New returns the state of column family name, created at stamp, whose
// objects have the layout crc and v2 say.
func New(env *Env, name string, stamp int64, crc, v2 bool) *Family {
	f := &Family{Env: env, Name: name, Stamp: stamp, NameArg: name, StampArg: stamp}
	f.SetShape(NewShape(name, crc, v2))
	f.Sealed.Store(!layout.IsHidden(name))
	return f
}

// Sealing returns the encryption state when the values of f are sealed:
// an encrypted store and a sealed table. Otherwise nil.
func (f *Family) Sealing() *seal.State {
	if !f.Sealed.Load() {
		return nil
	}
	return f.Env.Seal.Load()
}

// Codec returns the codec of f's rows in the layout sh (Writing or
// Reading) with the encryption state the store follows now, counting in
// the store's counters. A read sets its Ctx, Conn and Snap for the rare
// read of an older snapshot.
func (f *Family) Codec(sh *Shape) rowcodec.Codec {
	return rowcodec.Codec{Objects: &sh.Objects, Upsert: sh.SQL.Upsert, Seal: f.Sealing(), Sealed: f.Sealed.Load(), Stats: &f.Env.DB.Stats, Past: &f.Env.past}
}

// SetShape makes sh the layout both writes and reads use.
func (f *Family) SetShape(sh *Shape) { f.writing.Store(sh); f.reading.Store(sh) }

// Writing returns the layout writes use.
func (f *Family) Writing() *Shape { return f.writing.Load() }

// Reading returns the layout reads use.
func (f *Family) Reading() *Shape { return f.reading.Load() }

// SwitchShape gives f the layout sh inside write transaction tx: writes
// at once (tx holds the writer, so no other write runs before it
// commits), reads once tx has committed; a rollback restores the old one.
func (f *Family) SwitchShape(tx *engine.Tx, sh *Shape) {
	old := f.Writing()
	f.writing.Store(sh)
	tx.OnRollback(func() { f.writing.Store(old) })
	tx.OnCommit(func() { f.reading.Store(sh) })
}

// Handles. A *columnfamily.ColumnFamily is built from a Family, and bound
// to a transaction, by these two functions, which package columnfamily
// sets at init: the packages below it cannot name its type, and it exports
// no constructor. kvstore asserts the type of what they return.
var (
	// NewHandle returns the *columnfamily.ColumnFamily of f (nil f: nil).
	NewHandle func(f *Family) any
	// BindHandle returns h, a *columnfamily.ColumnFamily (nil included),
	// bound to tx; see kvstore.Tx.CF.
	BindHandle func(h any, tx *engine.Tx) any
)

// Update runs fn in a write transaction: bound, when not nil, or a new one
// that commits when fn succeeds. Errors are wrapped with op.
func (e *Env) Update(ctx context.Context, bound *engine.Tx, op string, fn func(ctx context.Context, tx *engine.Tx) error) error {
	if bound != nil {
		if err := bound.Check(true); err != nil {
			return err
		}
		return engine.Wrap(bound.Ctx(), op, fn(bound.Ctx(), bound))
	}
	tx, err := e.DB.Begin(ctx, true)
	if err != nil {
		return engine.Wrap(ctx, op, err)
	}
	if err := fn(tx.Ctx(), tx); err != nil {
		_ = tx.Rollback()
		return engine.Wrap(ctx, op, err)
	}
	return tx.Commit()
}

// CheckContext rejects a nil context: every snkv call that takes one
// reports ErrInvalidArgument for nil rather than guessing a default.
func CheckContext(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", engine.ErrInvalidArgument)
	}
	return nil
}

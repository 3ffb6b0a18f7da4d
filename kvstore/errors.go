package kvstore

import (
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/iterator"
)

// Errors returned by snkv, always wrapped with context: compare them with
// errors.Is.
var (
	// ErrNotFound: the key, or the column family, does not exist (an expired
	// key does not exist).
	ErrNotFound = engine.ErrNotFound
	// ErrClosed: the store was closed.
	ErrClosed = engine.ErrClosed
	// ErrReadOnly: a write on a store opened read-only (or a file SQLite
	// cannot write).
	ErrReadOnly = engine.ErrReadOnly
	// ErrInvalidKey: a nil or empty key.
	ErrInvalidKey = engine.ErrInvalidKey
	// ErrKeyTooLarge: a key longer than MaxKeySize.
	ErrKeyTooLarge = engine.ErrKeyTooLarge
	// ErrValueTooLarge: a value longer than Options.MaxValueSize.
	ErrValueTooLarge = engine.ErrValueTooLarge
	// ErrInvalidName: a column family name that is empty, too long, not
	// UTF-8 or contains NUL.
	ErrInvalidName = engine.ErrInvalidName
	// ErrReservedName: a column family name starting with "__" or "sqlite_".
	ErrReservedName = engine.ErrReservedName
	// ErrExists: the column family (or a table of that name) already exists.
	ErrExists = engine.ErrExists
	// ErrTxDone: the transaction was already committed or rolled back.
	ErrTxDone = engine.ErrTxDone
	// ErrReadOnlyTx: a write inside a read-only transaction. Nothing is
	// written and the transaction stays usable.
	ErrReadOnlyTx = engine.ErrReadOnlyTx
	// ErrBusy: the write lock (or a connection) stayed taken for longer than
	// Options.BusyTimeout; or the schema kept changing while a statement
	// was compiled (SQLite's SQLITE_SCHEMA, after 20 retries).
	ErrBusy = engine.ErrBusy
	// ErrCorrupt: the file is damaged or not a database at all; also a
	// table, view or TTL table of snkv's dropped outside snkv (the message
	// names it; Repair recreates it).
	ErrCorrupt = engine.ErrCorrupt
	// ErrNotStore: a SQLite database that is not an snkv store (see
	// Options.Adopt).
	ErrNotStore = engine.ErrNotStore
	// ErrVersion: the store's format version does not allow the call:
	// Open of a store written by a newer snkv format, or, on a version-1
	// store, a call that needs version 2 (Encrypt, a layer sealing its hidden table or
	// creating a sealed one): Upgrade it first.
	ErrVersion = engine.ErrVersion
	// ErrCantOpen: the path cannot be opened (a directory, a missing file
	// opened read-only, no permission), or a read needed a new connection
	// and the path names another file than the one Open opened (the store's
	// file was deleted or renamed and another made in its place).
	ErrCantOpen = engine.ErrCantOpen
	// ErrInvalidTTL: a TTL that is zero or negative, or an expiry time that
	// is zero or not in the future.
	ErrInvalidTTL = engine.ErrInvalidTTL
	// ErrClockRange: a TTL write whose expiry, counted from the store's
	// Clock, falls before 1970-01-01 UTC (a clock set before the epoch) or
	// at or past the latest expiry a file holds (a clock some 292 million
	// years ahead). Expiries are stored as milliseconds since the epoch
	// without a sign; nothing is written. Writes without TTL are not
	// affected, and reads decide expiry correctly whatever the clock.
	ErrClockRange = engine.ErrClockRange
	// ErrInvalidOption: an Options field out of range.
	ErrInvalidOption = engine.ErrInvalidOption
	// ErrDiskFull: the disk (or the database's size limit) is full.
	ErrDiskFull = engine.ErrDiskFull
	// ErrIO: the operating system failed a read, write, sync or lock of
	// the file (SQLite's SQLITE_IOERR and its extended codes). What was
	// acknowledged before is kept; a failed commit is all or nothing (read
	// back to know which).
	ErrIO = engine.ErrIO
	// ErrDropDefault: an attempt to drop the default column family.
	ErrDropDefault = engine.ErrDropDefault
	// ErrForeignHandle: a column family handle from another store passed to
	// Tx.CF.
	ErrForeignHandle = engine.ErrForeignHandle
	// ErrInvalidArgument: a nil argument where a value is required (a nil
	// context, batch, function or column family handle) or a method called
	// on a nil handle (*Store, *Tx, *ColumnFamily, *Cursor).
	ErrInvalidArgument = engine.ErrInvalidArgument
	// ErrAuth: an encrypted store opened without its password or key, or
	// with the wrong one; an encryption header whose fields were changed
	// so that it no longer authenticates under the secret; or a sealed
	// value that fails authentication (changed, truncated, or copied from
	// another key, column family or store). A header that is damaged (it
	// cannot be parsed, fails its checksum, or its row is not a BLOB) is
	// ErrCorrupt instead. A refused open changes nothing in the file. See
	// docs/encryption.md.
	ErrAuth = engine.ErrAuth
	// ErrClosedCursor: a Cursor used after Close, and Err or Close of a
	// nil *Cursor (iterator.ErrClosedCursor, the same value).
	ErrClosedCursor = iterator.ErrClosedCursor
)

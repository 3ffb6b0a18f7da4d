package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. The kvstore package re-exports each of them; callers
// compare with errors.Is.
var (
	ErrNotFound        = errors.New("snkv: not found")
	ErrClosed          = errors.New("snkv: store is closed")
	ErrReadOnly        = errors.New("snkv: store is read-only")
	ErrInvalidKey      = errors.New("snkv: invalid key")
	ErrKeyTooLarge     = errors.New("snkv: key too large")
	ErrValueTooLarge   = errors.New("snkv: value too large")
	ErrInvalidName     = errors.New("snkv: invalid column family name")
	ErrReservedName    = errors.New("snkv: reserved column family name")
	ErrExists          = errors.New("snkv: already exists")
	ErrTxDone          = errors.New("snkv: transaction already committed or rolled back")
	ErrReadOnlyTx      = errors.New("snkv: write in a read-only transaction")
	ErrBusy            = errors.New("snkv: database is busy")
	ErrCorrupt         = errors.New("snkv: database is corrupt or not a database")
	ErrNotStore        = errors.New("snkv: file is a SQLite database but not an snkv store")
	ErrVersion         = errors.New("snkv: store format version not supported")
	ErrCantOpen        = errors.New("snkv: cannot open database file")
	ErrInvalidTTL      = errors.New("snkv: invalid TTL")
	ErrClockRange      = errors.New("snkv: expiry outside the range a store can hold")
	ErrInvalidOption   = errors.New("snkv: invalid option")
	ErrDiskFull        = errors.New("snkv: disk full")
	ErrIO              = errors.New("snkv: I/O error")
	ErrDropDefault     = errors.New("snkv: the default column family cannot be dropped")
	ErrForeignHandle   = errors.New("snkv: column family belongs to another store")
	ErrInvalidArgument = errors.New("snkv: invalid argument")
	ErrAuth            = errors.New("snkv: authentication failed")
)

// SQLite primary result codes used by the mapping below.
const (
	codeError     = 1
	codeBusy      = 5
	codeLocked    = 6
	codeReadOnly  = 8
	codeInterrupt = 9
	codeIOErr     = 10
	codeCorrupt   = 11
	codeFull      = 13
	codeCantOpen  = 14
	codeSchema    = 17
	codeNotADB    = 26
)

// Code returns the primary SQLite result code carried by err, or 0.
func Code(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.code & 0xff
	}
	return 0
}

// Wrap maps a driver error to the matching sentinel and adds context.
// A nil err stays nil; an error that already carries a sentinel is only
// given context.
func Wrap(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if ctx != nil && ctx.Err() != nil && (Code(err) == codeInterrupt || errors.Is(err, ctx.Err())) {
		return fmt.Errorf("snkv: %s: %w", op, ctx.Err())
	}
	s := sentinelFor(err)
	switch {
	case s == nil || errors.Is(err, s):
	case s == ErrCorrupt && errors.Is(err, ErrNotFound):
		// A column family dropped under the statement: the caller has
		// already said so (columnfamily's dropped).
	case NoSuchTable(err):
		return fmt.Errorf("snkv: %s: %w: %s: %w", op, s, missingHint(err), err)
	default:
		return fmt.Errorf("snkv: %s: %w: %w", op, s, err)
	}
	return fmt.Errorf("snkv: %s: %w", op, err)
}

// NoSuchTable reports whether err is SQLite's "no such table" error: a
// statement named a table that does not exist (or no longer does). SQLite
// reports it with SQLITE_ERROR, or with SQLITE_SCHEMA when the schema
// changed again while it compiled the statement (see schemaRetries).
func NoSuchTable(err error) bool {
	switch Code(err) {
	case codeError, codeSchema:
		return strings.Contains(err.Error(), "no such table")
	}
	return false
}

func sentinelFor(err error) error {
	switch Code(err) {
	case codeBusy, codeLocked:
		return ErrBusy
	case codeReadOnly:
		return ErrReadOnly
	case codeCorrupt, codeNotADB:
		return ErrCorrupt
	case codeFull:
		return ErrDiskFull
	case codeIOErr:
		return ErrIO
	case codeCantOpen:
		return ErrCantOpen
	case codeError, codeSchema:
		// A table or view the statement names is missing: see Wrap.
		if NoSuchTable(err) {
			return ErrCorrupt
		}
		if Code(err) == codeSchema {
			// The schema kept changing through every retry (see
			// schemaRetries): contention, like a busy lock.
			return ErrBusy
		}
	}
	return nil
}

// missingHint describes SQLite's "no such table" error err for a user: the
// object it names is one of snkv's (the caller knows it is not a column
// family dropped meanwhile), so the file was changed outside snkv.
func missingHint(err error) string {
	msg := err.Error()
	name := "a table or view"
	const marker = "no such table: "
	if i := strings.Index(msg, marker); i >= 0 {
		n := msg[i+len(marker):]
		if j := strings.Index(n, " ("); j >= 0 {
			n = n[:j]
		}
		n = strings.TrimPrefix(n, "main.")
		name = fmt.Sprintf("%q", n)
	}
	return fmt.Sprintf("%s is missing from the file (dropped outside snkv?): IntegrityCheck reports it, Repair recreates it", name)
}

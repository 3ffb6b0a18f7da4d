package timelog

import (
	"errors"
	"fmt"
	"slices"

	"github.com/snkv-go/snkv/kvstore"
)

// Errors of package timelog, always wrapped with context: compare them with
// errors.Is. They form one family with the store's errors: where both
// packages name the same condition, an error of either kind matches both
// sentinels. ErrClosed matches kvstore.ErrClosed, and a kvstore.ErrClosed
// coming out of this package (a log on a closed store) matches ErrClosed;
// likewise ErrBusy, ErrReadOnly, ErrNotFound, ErrInvalidOption, ErrCorrupt,
// ErrValueTooLarge and ErrInvalidArgument with the kvstore error of the same
// name. ErrInvalidRange is also an ErrInvalidArgument, and ErrValueNotFound
// an ErrNotFound, of both packages. The store's other errors
// (kvstore.ErrDiskFull, kvstore.ErrIO, ...) come through wrapped.
var (
	// ErrInvalidRange: a range whose start is after its end. Nothing is
	// written or read. It is also an ErrInvalidArgument.
	ErrInvalidRange = newError("timelog: invalid range", &ErrInvalidArgument, &kvstore.ErrInvalidArgument)
	// ErrBusy: the store's write lock (or a read connection) stayed taken
	// longer than the store's BusyTimeout: nothing was written, a retry is
	// safe. From a write (Append, ...) it means the write was not accepted:
	// making room for it needed a flush that could not take the lock. Same
	// condition as kvstore.ErrBusy.
	ErrBusy = newError("timelog: busy", &kvstore.ErrBusy)
	// ErrQueueFull: only with Options.Busy set to BusyAcceptAndReport, from
	// a write (Append, AppendBatch, AppendValue(s), the deletes): the write
	// WAS accepted, but the queue of sealed buffers is full. Do not retry
	// it, that would write it twice. It matches no other error.
	ErrQueueFull = newError("timelog: the write was accepted, the sealed queue is full")
	// ErrLocked: another Log (in this process or another) has the log open
	// for writing.
	ErrLocked = newError("timelog: log is locked by another writer")
	// ErrSnapshotsOpen: Close or Drop while snapshots or cursors of the log
	// are still open. The log stays open.
	ErrSnapshotsOpen = newError("timelog: snapshots are still open")
	// ErrClosed: the log (or the snapshot), or the store under it, was
	// closed. Same condition as kvstore.ErrClosed.
	ErrClosed = newError("timelog: closed", &kvstore.ErrClosed)
	// ErrReadOnly: a write on a log opened read-only (or on a read-only
	// store). Same condition as kvstore.ErrReadOnly.
	ErrReadOnly = newError("timelog: read-only", &kvstore.ErrReadOnly)
	// ErrNotFound: the log does not exist (Drop, or a read-only Open). Same
	// condition as kvstore.ErrNotFound.
	ErrNotFound = newError("timelog: log not found", &kvstore.ErrNotFound)
	// ErrInvalidOption: an Options field out of range. Same condition as
	// kvstore.ErrInvalidOption.
	ErrInvalidOption = newError("timelog: invalid option", &kvstore.ErrInvalidOption)
	// ErrCorrupt: a page, a value block or a metadata row of the log cannot
	// be decoded. Same condition as kvstore.ErrCorrupt.
	ErrCorrupt = newError("timelog: corrupt", &kvstore.ErrCorrupt)
	// ErrNoValues: a value operation on a log that does not store values,
	// or Open with Options.Values of a log written without them (see
	// Options.Values).
	ErrNoValues = newError("timelog: the log does not store values")
	// ErrValuesLog: Append or AppendBatch on a values log, where the log
	// assigns the handles (use AppendValue).
	ErrValuesLog = newError("timelog: the log stores values")
	// ErrValueTooLarge: a value above the store's MaxValueSize. Nothing is
	// written. Same condition as kvstore.ErrValueTooLarge.
	ErrValueTooLarge = newError("timelog: value too large", &kvstore.ErrValueTooLarge)
	// ErrValuesLayout: the values table of the log is in a layout this
	// library does not read: a newer layout, or, for a read-only Open, one
	// row per value (written before value blocks), which a writable Open
	// converts: open the log writable once. Nothing is changed.
	ErrValuesLayout = newError("timelog: unknown values table layout")
	// ErrValueNotFound: the snapshot has no value for the handle. It is
	// also an ErrNotFound.
	ErrValueNotFound = newError("timelog: value not found", &ErrNotFound, &kvstore.ErrNotFound)
	// ErrInvalidArgument: malformed arguments (for example AppendValues
	// with as many timestamps as values). Nothing is written. Same
	// condition as kvstore.ErrInvalidArgument.
	ErrInvalidArgument = newError("timelog: invalid argument", &kvstore.ErrInvalidArgument)
	// ErrManualMode: StartMaintenance on a log opened with Maintenance set
	// to Manual.
	ErrManualMode = newError("timelog: maintenance is manual")
)

// sentinel is an error of this package that also matches, with errors.Is,
// the errors its also points to (read when matched: the variables they
// point to may be initialized after this one).
type sentinel struct {
	msg  string
	also []*error
}

func newError(msg string, also ...*error) error { return &sentinel{msg: msg, also: also} }

func (e *sentinel) Error() string { return e.msg }

// Is reports whether target is one of the errors e also matches.
func (e *sentinel) Is(target error) bool {
	return slices.ContainsFunc(e.also, func(p *error) bool { return *p == target })
}

// alike pairs each error of the store with this package's error for the
// same condition.
var alike = []struct{ store, log error }{
	{kvstore.ErrBusy, ErrBusy},
	{kvstore.ErrClosed, ErrClosed},
	{kvstore.ErrReadOnly, ErrReadOnly},
	{kvstore.ErrNotFound, ErrNotFound},
	{kvstore.ErrInvalidOption, ErrInvalidOption},
	{kvstore.ErrCorrupt, ErrCorrupt},
	{kvstore.ErrValueTooLarge, ErrValueTooLarge},
	{kvstore.ErrInvalidArgument, ErrInvalidArgument},
}

// storeError is an error of the store coming out of this package: it reads
// and unwraps as the store's error, and also matches this package's error
// for the same condition.
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

func (e *storeError) Is(target error) bool {
	for _, a := range alike {
		if target == a.log && errors.Is(e.err, a.store) {
			return true
		}
	}
	return false
}

// fromStore returns err so that it matches this package's errors as well
// as the store's (see storeError). Every error an exported function or
// method returns passes through it; nil stays nil, and an error that
// already matches each of this package's errors its store errors call for
// is returned as it is.
func fromStore(err error) error {
	if err == nil {
		return nil
	}
	for _, a := range alike {
		if errors.Is(err, a.store) && !errors.Is(err, a.log) {
			return &storeError{err}
		}
	}
	return err
}

func errInvalidRange(t1, t2 int64) error {
	return fmt.Errorf("%w: start %d is after end %d", ErrInvalidRange, t1, t2)
}

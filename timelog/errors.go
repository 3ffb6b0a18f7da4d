package timelog

import (
	"errors"
	"fmt"
)

// Errors of package timelog, always wrapped with context: compare them with
// errors.Is. Errors of the store underneath (kvstore.ErrClosed,
// kvstore.ErrDiskFull, ...) come through wrapped as well.
var (
	// ErrInvalidRange: a range whose start is after its end. Nothing is
	// written or read.
	ErrInvalidRange = errors.New("timelog: invalid range")
	// ErrBusy has two meanings. From a write (Append, AppendBatch, the
	// deletes) it means the write WAS accepted but the queue of sealed
	// buffers is full (see Options.Busy): do not retry it, that would write
	// it twice. From Flush, MaintStep or Compact it means the store's write
	// lock stayed taken: nothing was lost and a retry is safe.
	ErrBusy = errors.New("timelog: busy")
	// ErrLocked: another Log (in this process or another) has the log open
	// for writing.
	ErrLocked = errors.New("timelog: log is locked by another writer")
	// ErrSnapshotsOpen: Close or Drop while snapshots or cursors of the log
	// are still open. The log stays open.
	ErrSnapshotsOpen = errors.New("timelog: snapshots are still open")
	// ErrClosed: the log (or the snapshot) was closed.
	ErrClosed = errors.New("timelog: closed")
	// ErrReadOnly: a write on a log opened read-only.
	ErrReadOnly = errors.New("timelog: read-only")
	// ErrNotFound: the log does not exist (Drop, or a read-only Open).
	ErrNotFound = errors.New("timelog: log not found")
	// ErrInvalidOption: an Options field out of range.
	ErrInvalidOption = errors.New("timelog: invalid option")
	// ErrCorrupt: a page or a metadata row of the log cannot be decoded.
	ErrCorrupt = errors.New("timelog: corrupt")
	// ErrNoValues: a value operation on a log that does not store values
	// (see Options.Values).
	ErrNoValues = errors.New("timelog: the log does not store values")
	// ErrValuesLog: Append or AppendBatch on a values log, where the log
	// assigns the handles (use AppendValue).
	ErrValuesLog = errors.New("timelog: the log stores values")
	// ErrValueTooLarge: a value above the store's MaxValueSize. Nothing is
	// written.
	ErrValueTooLarge = errors.New("timelog: value too large")
	// ErrValuesLayout: the values table of the log is in a layout this
	// library does not read: a newer layout, or, for a read-only Open, one
	// row per value (written before value blocks), which a writable Open
	// converts: open the log writable once. Nothing is changed.
	ErrValuesLayout = errors.New("timelog: unknown values table layout")
	// ErrValueNotFound: the snapshot has no value for the handle.
	ErrValueNotFound = errors.New("timelog: value not found")
	// ErrInvalidArgument: malformed arguments (for example AppendValues
	// with as many timestamps as values). Nothing is written.
	ErrInvalidArgument = errors.New("timelog: invalid argument")
	// ErrManualMode: StartMaintenance on a log opened with Maintenance set
	// to Manual.
	ErrManualMode = errors.New("timelog: maintenance is manual")
)

func errInvalidRange(t1, t2 int64) error {
	return fmt.Errorf("%w: start %d is after end %d", ErrInvalidRange, t1, t2)
}

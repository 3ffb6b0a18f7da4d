package timelog

import (
	"fmt"
	"math"
	"time"
)

// MaintenanceMode selects who flushes sealed buffers and compacts.
type MaintenanceMode int

const (
	// Background (the default): Open starts a goroutine that flushes sealed
	// buffers as they appear and compacts when a threshold is passed.
	Background MaintenanceMode = iota
	// Manual: nothing runs on its own; call MaintStep (or Flush, Compact).
	Manual
)

// BusyPolicy decides what a write does when the write buffer is full and
// so is the queue of sealed buffers (SealedMaxRuns): flushing does not keep
// up with the writes.
type BusyPolicy int

const (
	// BusyWait (the default): the write makes room before it is accepted.
	// With background maintenance running it waits up to SealedWait for a
	// flush to take a sealed buffer off the queue; then (at once in Manual
	// mode) it flushes the oldest sealed buffer itself. Memory stays
	// bounded, and a write that returns an error was not accepted: nothing
	// of it is written and a retry is safe (ErrBusy if that flush could not
	// take the store's write lock within its BusyTimeout).
	BusyWait BusyPolicy = iota
	// BusySilent: the write is accepted and returns nil; the buffer grows
	// past MemtableMaxBytes until maintenance catches up, so memory is not
	// bounded.
	BusySilent
	// BusyFlush: as BusyWait, without the wait: the write flushes the whole
	// queue and the full buffer itself, then is accepted.
	BusyFlush
	// BusyAcceptAndReport: the write is accepted, then (after waiting up to
	// SealedWait for room with background maintenance running) returns
	// ErrQueueFull, which means "accepted, do not retry"; the buffer grows
	// as with BusySilent. For callers that shed load on their own.
	BusyAcceptAndReport
)

// BusyRaise is the former name of BusyAcceptAndReport, once the default.
//
// Deprecated: a write it accepts now returns ErrQueueFull, not ErrBusy.
// Use the default, BusyWait, under which an error always means the write
// was not accepted; or BusyAcceptAndReport by its name.
const BusyRaise = BusyAcceptAndReport

// Options configures Open. The zero value is the default.
type Options struct {
	// ReadOnly opens the log for reading only: no writer lock is taken,
	// nothing runs in the background, writes fail with ErrReadOnly, and
	// every snapshot sees what the writer has flushed. A log on a read-only
	// store is always read-only.
	ReadOnly bool
	// MemtableMaxBytes is the size of the write buffer (24 bytes a record or
	// a delete) at which it is sealed. 0 means 1 MiB. A larger buffer means
	// fewer, larger flushes and more to lose in a crash.
	MemtableMaxBytes int
	// SealedMaxRuns bounds the queue of sealed buffers waiting for a flush;
	// past it writes meet the Busy policy. 0 means 4. Each sealed buffer
	// holds up to MemtableMaxBytes of memory.
	SealedMaxRuns int
	// SealedWait is how long a write that finds the sealed queue full
	// waits, in Background mode, for maintenance to make room before it
	// flushes itself (BusyWait) or reports ErrQueueFull
	// (BusyAcceptAndReport). 0 means 100 ms; a negative value never waits.
	SealedWait time.Duration
	// Busy is the backpressure policy; the default, BusyWait, never returns
	// an error for a write it accepted.
	Busy BusyPolicy
	// PageMaxBytes is the largest page (one SQLite row holding many
	// records), header included. 0 means 16 KiB, or the store's
	// MaxValueSize if that is lower; at least 54 (the largest one-record
	// page), at most 16 MiB and at most the store's MaxValueSize (Open
	// fails with ErrInvalidOption above it, as it does on a store whose
	// MaxValueSize is below 54). Pages are dense (docs/format.md): a record
	// takes 3 to 30 bytes, about 3 for timestamps that mostly grow by a
	// small step and handles that mostly do too, so a 16 KiB page holds
	// about 5,000 such records. Larger pages scan a little faster; smaller
	// ones make range reads cheaper (SQLite reads a large row whole to
	// compare it on a B-tree descent, and a range read decodes at least one
	// page).
	PageMaxBytes int
	// Maintenance selects Background (default) or Manual maintenance.
	Maintenance MaintenanceMode
	// CompactOverlapPages is the number of mutually overlapping pages at
	// which background maintenance compacts them. 0 means 4.
	CompactOverlapPages int
	// CompactDeletedShare is the estimated share of deleted records in a
	// page (the part of its time span covered by newer deletes) at which
	// background maintenance rewrites it. 0 means 0.25.
	CompactDeletedShare float64
	// CompactMaxPages bounds the pages one compaction transaction rewrites,
	// so that no writer waits long behind it. 0 means 64 (1 MiB with
	// default pages).
	CompactMaxPages int
	// MaintInterval is how often background maintenance looks for work when
	// nothing wakes it. 0 means 1 s.
	MaintInterval time.Duration
	// OnDrop is told of every record physically removed (by compaction, by
	// a flush that drops records already deleted, or by Drop), once per
	// record, after the removing transaction committed, never while a lock
	// of the log is held. It may call back into the log. nil: not told.
	OnDrop func(Record)
	// OnRelease is told the handle of a dropped record once no open
	// snapshot can return it any more. It may call back into the log.
	OnRelease func(handle uint64)
	// ReleaseDrainLimit bounds the OnRelease calls made by one call that
	// drains (a snapshot's Close, a maintenance step); the rest wait for the
	// next one. Close drains everything. 0 means no limit.
	ReleaseDrainLimit int
	// Values makes the log store a byte payload with every record
	// (AppendValue): the log assigns the handles and keeps the values in a
	// hidden table beside the pages, removing each with its record. Default
	// false. A log created with values always has them: opening it without
	// this flag still gives a values log. A log written without values (a
	// record or a delete stored) holds the caller's handles, which assigned
	// ones would collide with: opening it with this flag fails with
	// ErrNoValues and changes nothing (a plain log never written becomes a
	// values log). Costs the value bytes in the
	// write buffer until the flush, then about 8 bytes a value beside them
	// in blocks of up to 16 KiB (a removal rewrites the blocks holding the
	// removed values).
	Values bool
	// ValueBlockBytes is the size a values log fills its value blocks up
	// to (one SQLite row each, header included). 0 means 16 KiB, or the
	// store's MaxValueSize if that is lower; at least 64, at most the
	// store's MaxValueSize. It is a writer's choice: blocks of any size
	// are read. Large blocks make ingest and scans cheap per value; small
	// ones make Snapshot.Value cheaper, because SQLite reads a row that
	// overflows its page whole to compare it on a B-tree descent (with 4
	// KiB pages, blocks under about 1,000 bytes never overflow; see
	// docs/benchmarks.md for the trade-off measured).
	ValueBlockBytes int
	// OnMaintError receives errors of background maintenance, which retries
	// with backoff; nil drops them (Stats counts them).
	OnMaintError func(error)
}

const recSize = 24

type config struct {
	Options
	memRecs     int // records (and deletes) in a full buffer
	interval    time.Duration
	deletedFrac float64
}

// config checks o and fills in the defaults, for a store whose largest
// value is maxValue bytes (a page is one row of the store).
func (o Options) config(maxValue int) (config, error) {
	bad := func(format string, a ...any) (config, error) {
		return config{}, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, a...)...)
	}
	c := config{Options: o}
	var ok bool
	switch {
	case o.MemtableMaxBytes < 0:
		return bad("negative MemtableMaxBytes %d", o.MemtableMaxBytes)
	case o.MemtableMaxBytes == 0:
		c.MemtableMaxBytes = 1 << 20
	}
	switch {
	case o.SealedMaxRuns < 0:
		return bad("negative SealedMaxRuns %d", o.SealedMaxRuns)
	case o.SealedMaxRuns == 0:
		c.SealedMaxRuns = 4
	}
	if o.SealedWait == 0 {
		c.SealedWait = 100 * time.Millisecond
	}
	if o.Busy < BusyWait || o.Busy > BusyAcceptAndReport {
		return bad("unknown busy policy %d", o.Busy)
	}
	switch {
	case maxValue < denseMinPage:
		return bad("the store's MaxValueSize %d is below the smallest page (%d bytes)", maxValue, denseMinPage)
	case o.PageMaxBytes == 0:
		c.PageMaxBytes = min(16<<10, maxValue)
	case o.PageMaxBytes < denseMinPage || o.PageMaxBytes > 16<<20:
		return bad("PageMaxBytes %d outside %d..16 MiB", o.PageMaxBytes, denseMinPage)
	case o.PageMaxBytes > maxValue:
		return bad("PageMaxBytes %d is above the store's MaxValueSize %d (a page is one row)", o.PageMaxBytes, maxValue)
	}
	switch {
	case o.ValueBlockBytes == 0:
		c.ValueBlockBytes = min(valueBlockBytes, maxValue)
	case o.ValueBlockBytes < minValueBlock || o.ValueBlockBytes > maxValue:
		return bad("ValueBlockBytes %d outside %d..%d (the store's MaxValueSize)", o.ValueBlockBytes, minValueBlock, maxValue)
	}
	if o.Maintenance != Background && o.Maintenance != Manual {
		return bad("unknown maintenance mode %d", o.Maintenance)
	}
	if c.CompactOverlapPages, ok = pageCount(o.CompactOverlapPages, 4); !ok {
		return bad("CompactOverlapPages %d (at least 2)", o.CompactOverlapPages)
	}
	switch {
	case math.IsNaN(o.CompactDeletedShare) || o.CompactDeletedShare < 0 || o.CompactDeletedShare > 1:
		return bad("CompactDeletedShare %v outside 0..1", o.CompactDeletedShare)
	case o.CompactDeletedShare == 0:
		c.deletedFrac = 0.25
	default:
		c.deletedFrac = o.CompactDeletedShare
	}
	if c.CompactMaxPages, ok = pageCount(o.CompactMaxPages, 64); !ok {
		return bad("CompactMaxPages %d (at least 2)", o.CompactMaxPages)
	}
	switch {
	case o.MaintInterval < 0:
		return bad("negative MaintInterval %v", o.MaintInterval)
	case o.MaintInterval == 0:
		c.interval = time.Second
	default:
		c.interval = o.MaintInterval
	}
	if o.ReleaseDrainLimit < 0 {
		return bad("negative ReleaseDrainLimit %d", o.ReleaseDrainLimit)
	}
	c.memRecs = max(1, c.MemtableMaxBytes/recSize)
	return c, nil
}

// pageCount checks a count of pages that must be at least 2: 0 gives def,
// and false reports 1 or a negative count.
func pageCount(n, def int) (int, bool) {
	switch {
	case n == 0:
		return def, true
	case n < 2:
		return n, false
	}
	return n, true
}

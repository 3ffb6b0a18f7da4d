package kvstore

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/family"
	"github.com/snkv-go/snkv/ttl"
)

// JournalMode selects SQLite's journal. The zero value is WAL.
type JournalMode int

const (
	// JournalWAL (the default) lets readers run while a writer commits and
	// gives every reader a stable snapshot.
	JournalWAL JournalMode = iota
	// JournalDelete is SQLite's rollback journal: one file, no -wal/-shm
	// companions, but writers wait for readers and readers for writers.
	JournalDelete
)

// SyncMode selects how hard a commit pushes data to disk. The zero value is
// SyncNormal.
type SyncMode int

const (
	// SyncNormal (the default): with WAL, a commit survives a process crash;
	// the last commits may be lost on power failure, never corrupted.
	SyncNormal SyncMode = iota
	// SyncOff: no fsync at all; fastest, unsafe on power failure.
	SyncOff
	// SyncFull: fsync on every commit; durable across power failure.
	SyncFull
)

// Options configures Open. The zero value is a safe default: WAL journal,
// synchronous=NORMAL, a 5 s busy timeout, 10 MiB values, a background purge
// of expired keys every minute, new files readable and writable by their
// owner only (FileMode 0600).
//
// synchronous=NORMAL does not sync each commit: a power loss (not a crash of
// the process) can lose the last commits, only a suffix of those since the
// last checkpoint and never part of a transaction. Sync: SyncFull syncs
// every commit. A clean Close checkpoints and syncs, which makes the last
// commits durable, only when no other process has the store open: it does
// not wait for them.
type Options struct {
	// ReadOnly opens the store without write access; every write fails
	// with ErrReadOnly. The file must exist and be an snkv store.
	ReadOnly bool
	// Journal is the journal mode; it is ignored for in-memory stores,
	// which are always WAL stores.
	Journal JournalMode
	// Sync is the synchronous level; it is ignored for in-memory stores,
	// which are never synced (nothing of them outlives the process).
	Sync SyncMode
	// CacheSize is the page cache of each connection, in bytes of page
	// data; 0 keeps SQLite's default (2 MiB). A connection's cache fills as
	// it reads and keeps what it read until it closes (or, for a reader,
	// until it starts a read transaction after another commit). Each
	// cached page also carries SQLite's headers: a full cache of 4 KiB
	// pages takes about 1.07 × CacheSize of anonymous memory, 2.1 MiB for
	// the default; other page sizes, which the pure-Go C library under
	// SQLite rounds up to a power of two, about 2.2 × (docs/memory.md).
	// With memory-mapped reads
	// (MmapSize) readers copy into their caches only the pages newer than
	// the last checkpoint.
	//
	// With CacheSize 0 the writer also lets a transaction that has written
	// more than 4,096 rows keep up to DefaultSpillPages changed pages (16
	// MiB of 4 KiB pages, about 17 MiB of memory) before it writes any to
	// the WAL ahead of the commit; the pages above the cache size are
	// freed when the transaction ends. A random bulk load runs about twice
	// as fast; smaller transactions keep SQLite's rule (spill once the
	// cache is full). Setting CacheSize keeps SQLite's rule for every
	// transaction, so SmallDevice stays small in bulk loads too.
	CacheSize int
	// PageSize is the page size of a new file: a power of two from 512 to
	// 65536; 0 keeps SQLite's default (4096). Existing files keep theirs.
	PageSize int
	// BusyTimeout is how long a write waits for the write lock (held by
	// another transaction or process), and a read for a free connection,
	// before failing with ErrBusy. 0 means 5 s. SQLite counts it in
	// milliseconds in a 32-bit integer: more than MaxBusyTimeout (about
	// 24.8 days) is refused with ErrInvalidOption rather than wrapped.
	BusyTimeout time.Duration
	// WALAutoCheckpoint is the WAL size, in pages, past which a commit
	// wakes the store's checkpointer, a goroutine that copies the WAL into
	// the file on a connection of its own while writes go on (commits no
	// longer checkpoint themselves); after a commit of that many pages or
	// more on its own, once the store is idle (no write transaction, no
	// commit and no read for 5 ms; at most half a second, or until the WAL
	// passes its bound); 0 means 1000 (SQLite's default), -1
	// turns automatic checkpoints off (call Checkpoint yourself). Once a
	// commit leaves the WAL at 7/4 of its size when the checkpointer was
	// woken (or of WALAutoCheckpoint, if more; or twice the largest commit
	// since the WAL restarted, if that is more) before the WAL has
	// restarted, the next write transaction that finds no copy running
	// copies the rest before it begins; one waits for a running copy only
	// once the WAL is at twice that bound. So the WAL stays bounded under
	// a steady stream of commits.
	// The batches of PurgeExpired are copied once, after the last (the WAL
	// meanwhile bounded at 32 times this size past its size at the start).
	WALAutoCheckpoint int
	// MaxReaders caps the read connections; 0 means max(8, 4×GOMAXPROCS).
	// Each open Cursor or read transaction holds one. Connections open on
	// demand, and each parses the file's whole schema on its first use and
	// keeps it: with many column families that is the cost to plan for
	// (about 26 KiB of memory per column family per connection, and 0.1 s
	// to open at 1,000 column families, 0.5-0.65 s at 3,000; see Open and
	// docs/benchmarks.md). Set it to the read concurrency the program needs.
	MaxReaders int
	// MmapSize is how many bytes of the database file each connection reads
	// through a memory mapping instead of read system calls; 0 means the
	// default, 256 MiB on 64-bit platforms and off on 32-bit ones (whose
	// address space is small); -1 turns it off (for small devices). Mapped
	// pages are the operating system's file cache: one physical copy shared
	// by every connection and process, reclaimable under pressure, never in
	// the Go heap. But the resident set size (VmRSS) counts a mapped page
	// once per connection that touched it, so it can show up to
	// (connections) × min(MmapSize, file size) more than without mapping
	// (a 26 MB store read by 4 readers: 182 MB instead of 59 MB, while the
	// proportional set size grew by about the file size and anonymous
	// memory fell); virtual address space is up to MmapSize per open
	// connection, and on Linux as much again for the WAL, which each
	// connection maps the same way for its reads. Where mapping is not supported SQLite silently reads as
	// without it. An I/O error on a mapped page (a failing disk, a file
	// truncated by another program) faults the process instead of failing
	// the read: turn it off for files on unreliable or network storage.
	MmapSize int64
	// ReadHold is how long an idle read connection keeps its last read
	// transaction open (between one and two ReadHold periods), so that the
	// next read skips starting one when nothing has committed since (any
	// commit, from any process, ends it at the next read); 0 means 5 ms, -1
	// never keeps one. It saves a point read about 7 µs (two system calls
	// and SQLite's read-lock protocol). While held, a read transaction keeps
	// checkpoints (of any process) from copying frames newer than its
	// snapshot, so the WAL can grow by what is committed meanwhile; Close
	// and Checkpoint end held transactions first. Held only for stores in
	// WAL mode on Linux, Android, macOS and the BSDs; elsewhere every read
	// begins and ends its own transaction.
	ReadHold time.Duration
	// MaxValueSize is the largest value accepted, in bytes; 0 means 10 MiB.
	// At most 1,000,000,000 - MaxKeySize - 1024 (SQLite's largest blob, less
	// room for the row around it).
	MaxValueSize int
	// Adopt lets Open turn an existing SQLite database that is not an snkv
	// store into one: snkv adds its catalog and default column family beside
	// the tables already there, which it leaves alone.
	Adopt bool
	// Upgrade makes Open convert a version-1 file to the current format
	// (see Store.Upgrade) before it returns. Off by default: a version-1
	// file is opened as it is and keeps working in version-1 mode. It is
	// ignored with ReadOnly. Cost: one pass over every row, in batches.
	Upgrade bool
	// UpgradeBatch is how many rows one Upgrade transaction converts; 0
	// means 2000. Smaller batches make writers wait less, larger ones
	// finish sooner.
	UpgradeBatch int
	// Encryption opens an encrypted store with its password or key; a new
	// store (a missing or empty file) is created encrypted. An existing
	// store in the clear opened with it is refused with ErrNotEncrypted and
	// left as it was, unless Encryption.EncryptInPlace asks to encrypt it
	// in place before Open returns (it must be writable and of the current
	// format). An encrypted store opened without it, or with the wrong
	// secret, is refused with ErrAuth and left as it was. See Encryption
	// and docs/encryption.md.
	Encryption *Encryption
	// keyless opens an encrypted store without its secret, for RepairFile:
	// every sealed value then fails with ErrAuth.
	keyless bool
	// Clock is the time source of every expiry decision; nil means the
	// system clock. Tests use a ttl.ManualClock.
	Clock Clock
	// PurgeInterval is how often the store reclaims expired keys by
	// itself: a goroutine of the store's runs PurgeExpiredAll (every
	// column family) at that interval until Close. Expired keys are never
	// returned by any read whether or not they are purged; the purge gives
	// their space back (reads also delete the expired keys they meet).
	//
	// 0 means DefaultPurgeInterval (one minute) when Clock is nil (the
	// system clock), and no background purge when Clock is set: a test
	// that moves a ManualClock by hand should not see keys reclaimed at
	// moments the wall clock picks. -1 turns the background purge off
	// (call PurgeExpiredAll yourself); other negative values are refused
	// with ErrInvalidOption. It never runs on a read-only store.
	//
	// Cost: one goroutine and a timer per store. A pass costs O(expired
	// keys) in batches of 256 per write transaction, so other writers
	// wait at most one batch; a pass that finds nothing expired costs a
	// look at each column family (the figures are in docs/ttl.md,
	// "Running the purge in production").
	PurgeInterval time.Duration
	// OnPurgeError receives errors of the background purge; nil drops them.
	OnPurgeError func(error)
	// FileMode is the permission bits of every file snkv creates for the
	// store: the store file when Open creates it, Backup's copy, and the
	// time series' lock files (timelog). SQLite gives the -wal, -shm and
	// -journal files the store file's mode, so they follow it. The
	// process's umask narrows it further, as for any file; files that
	// already exist keep their mode. 0 means DefaultFileMode (0600: the
	// owner only; stores hold user data and session tokens). It must be
	// permission bits only (no type, setuid, setgid or sticky bits) and
	// include owner read and write (0600), else Open fails with
	// ErrInvalidOption. Use 0640 or 0644 to let a group or everyone read
	// the store; readers running as other users share SQLite's WAL index
	// (the -shm file) best with write access to it, so give them the
	// files' group and 0660.
	FileMode os.FileMode
}

// Defaults of Options fields.
const (
	// DefaultSpillPages is how many changed pages the writer of a store
	// with CacheSize 0 keeps in memory in a transaction of more than 4,096
	// rows before writing them to the WAL early (see CacheSize).
	DefaultSpillPages = 4096
	// SmallDeviceCacheSize is the CacheSize of SmallDevice.
	SmallDeviceCacheSize = 256 << 10
	// DefaultMmapSize is the memory mapping of each connection when
	// Options.MmapSize is 0 on a 64-bit platform.
	DefaultMmapSize = 256 << 20
	// DefaultReadHold is Options.ReadHold when it is 0.
	DefaultReadHold = 5 * time.Millisecond
	// DefaultPurgeInterval is Options.PurgeInterval when it is 0 and
	// Options.Clock is nil.
	DefaultPurgeInterval = time.Minute
	// DefaultFileMode is Options.FileMode when it is 0: read and write
	// for the owner only, as bbolt's documentation opens files and as the
	// files of user data and credentials should be. SQLite's own default
	// (0644 less the umask) lets every local user read the store.
	DefaultFileMode os.FileMode = engine.DefaultFileMode
)

// Clock tells the time every expiry decision uses.
type Clock = ttl.Clock

// ManualClock is a Clock that moves only when told to, for tests.
type ManualClock = ttl.ManualClock

// NewManualClock returns a ManualClock set to t.
func NewManualClock(t time.Time) *ManualClock { return ttl.NewManualClock(t) }

// NoTTL is the remaining time TTL and GetTTL report for a key without
// expiry: time.Duration(-1). Compare with it before printing or rounding a
// remaining time: it is a time.Duration, so it prints as "-1ns", and
// Round or Truncate make it 0s. (A type of its own could print
// "no TTL", but TTL and GetTTL return time.Duration, and changing that
// would break every caller that keeps the result in one.)
//
//	if left == kvstore.NoTTL {
//		fmt.Println("permanent")
//	} else {
//		fmt.Println("expires in", left)
//	}
const NoTTL = ttl.NoTTL

// MaxBusyTimeout is the longest Options.BusyTimeout: SQLite takes the
// timeout as a 32-bit count of milliseconds.
const MaxBusyTimeout = time.Duration(math.MaxInt32) * time.Millisecond

// MaxKeySize is the longest key, in bytes (64 KiB).
const MaxKeySize = family.MaxKeySize

// SQLite's names of the journal and sync modes.
var (
	journalPragmas = [...]string{JournalWAL: "WAL", JournalDelete: "DELETE"}
	syncPragmas    = [...]string{SyncNormal: "NORMAL", SyncOff: "OFF", SyncFull: "FULL"}
)

func (o Options) config(path string) (engine.Config, error) {
	bad := func(format string, a ...any) (engine.Config, error) {
		return engine.Config{}, fmt.Errorf("%w: "+format, append([]any{engine.ErrInvalidOption}, a...)...)
	}
	cfg := engine.Config{
		Path:           path,
		ReadOnly:       o.ReadOnly,
		BusyTimeout:    o.BusyTimeout,
		AutoCheckpoint: o.WALAutoCheckpoint,
		MaxReaders:     o.MaxReaders,
		PageSize:       o.PageSize,
	}
	if o.UpgradeBatch < 0 {
		return bad("negative UpgradeBatch %d", o.UpgradeBatch)
	}
	if o.Journal < 0 || int(o.Journal) >= len(journalPragmas) {
		return bad("unknown journal mode %d", o.Journal)
	}
	cfg.Journal = journalPragmas[o.Journal]
	if o.Sync < 0 || int(o.Sync) >= len(syncPragmas) {
		return bad("unknown sync mode %d", o.Sync)
	}
	cfg.Sync = syncPragmas[o.Sync]
	switch {
	case o.BusyTimeout < 0:
		return bad("negative busy timeout %v", o.BusyTimeout)
	case o.BusyTimeout == 0:
		cfg.BusyTimeout = 5 * time.Second
	case o.BusyTimeout > MaxBusyTimeout:
		return bad("busy timeout %v is longer than %v", o.BusyTimeout, MaxBusyTimeout)
	}
	if o.CacheSize < 0 {
		return bad("negative cache size %d", o.CacheSize)
	}
	cfg.CacheKiB = (o.CacheSize + 1023) / 1024
	if o.CacheSize == 0 {
		cfg.SpillPages = DefaultSpillPages
	}
	if p := o.PageSize; p != 0 && (p < 512 || p > 65536 || p&(p-1) != 0) {
		return bad("page size %d is not a power of two from 512 to 65536", p)
	}
	if o.WALAutoCheckpoint < -1 {
		return bad("WAL auto-checkpoint %d (use -1 to disable)", o.WALAutoCheckpoint)
	}
	if o.MaxReaders < 0 {
		return bad("negative MaxReaders %d", o.MaxReaders)
	}
	switch {
	case o.MmapSize < -1:
		return bad("MmapSize %d (use -1 to turn it off)", o.MmapSize)
	case o.MmapSize == 0 && strconv.IntSize == 64:
		cfg.MmapSize = DefaultMmapSize
	case o.MmapSize > 0:
		cfg.MmapSize = o.MmapSize
	}
	switch {
	case o.ReadHold < -1:
		return bad("negative ReadHold %v (use -1 to turn it off)", o.ReadHold)
	case o.ReadHold == 0:
		cfg.ReadHold = DefaultReadHold
	case o.ReadHold > 0:
		cfg.ReadHold = o.ReadHold
	}
	if o.MaxValueSize < 0 || o.MaxValueSize > family.HardMaxValueSize {
		return bad("MaxValueSize %d outside 0..%d", o.MaxValueSize, family.HardMaxValueSize)
	}
	switch m := o.FileMode; {
	case m == 0:
		cfg.FileMode = DefaultFileMode
	case m&^os.ModePerm != 0:
		return bad("FileMode %v has bits other than permissions", m)
	case m&0o600 != 0o600:
		return bad("FileMode %v does not let the owner read and write", m)
	default:
		cfg.FileMode = m
	}
	if o.PurgeInterval < -1 {
		return bad("negative purge interval %v (use -1 to turn the background purge off)", o.PurgeInterval)
	}
	if o.ReadOnly && path == "" {
		return bad("an in-memory store cannot be read-only")
	}
	if err := o.checkEncryption(path); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// purgeInterval is the interval of the store's background purge; 0: none
// (see Options.PurgeInterval).
func (o Options) purgeInterval() time.Duration {
	switch {
	case o.ReadOnly || o.keyless || o.PurgeInterval < 0:
		return 0
	case o.PurgeInterval > 0:
		return o.PurgeInterval
	case o.Clock == nil:
		return DefaultPurgeInterval
	}
	return 0
}

// SmallDevice returns the Options of the small-device profile (phones,
// single-board computers, containers with a memory limit of tens of
// megabytes): no memory mapping (MmapSize -1), so that the resident set is
// not inflated by mapped file pages; a 256 KiB page cache per connection;
// and at most two reader connections (one for an open cursor and one for
// the reads made meanwhile). docs/memory.md gives what it saves and what it
// costs in speed, measured; the Go runtime's own share (GOGC,
// GOMEMLIMIT) is set by the program, not by a store, and is discussed
// there too. Change any field of the result as with any Options.
func SmallDevice() Options {
	return Options{MmapSize: -1, CacheSize: SmallDeviceCacheSize, MaxReaders: 2}
}

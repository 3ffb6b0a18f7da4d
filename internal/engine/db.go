package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Config is the resolved configuration of a DB. kvstore.Options is turned
// into a Config after validation; every field here is already valid.
type Config struct {
	Path     string // "" opens a private in-memory database (memory.go)
	ReadOnly bool
	Journal  string // "WAL" or "DELETE"
	Sync     string // "OFF", "NORMAL" or "FULL"
	CacheKiB int    // page cache per connection, KiB
	// SpillPages is how many changed pages the writer keeps in memory
	// before writing them to the WAL ahead of the commit (PRAGMA
	// cache_spill) in a transaction that has written more than
	// BigTxRows rows below SQL; 0 leaves SQLite's default (the cache
	// size) for every transaction.
	SpillPages     int
	PageSize       int // page size of a new file; 0 keeps SQLite's default
	BusyTimeout    time.Duration
	AutoCheckpoint int           // WAL pages; 0 leaves SQLite's default; <0 disables
	MaxReaders     int           // read connections at most
	MmapSize       int64         // bytes of the file each connection maps; 0: no mapping
	ReadHold       time.Duration // how long an idle reader keeps its read transaction; 0: never
	FileMode       os.FileMode   // permission bits of the files snkv creates (store file, backups)
	NoProbe        bool          // never probe (see probeNeeded): another process holds the file
}

// DB is a writer connection plus a pool of reader connections on one file.
type DB struct {
	// retired counts RetireHeld calls (checkpointGen).
	retired atomic.Uint64
	cfg     Config
	dsn     string
	memDir  string        // the private directory of an in-memory store (memory.go)
	memOnce sync.Once     // removes memDir
	writer  chan *Conn    // holds the idle writer; nil for read-only stores
	readers chan *Conn    // idle readers
	freed   chan struct{} // a reader was closed: a waiter may open another
	mu      sync.Mutex
	nOpen   int  // readers open, idle or in use
	ended   bool // Close or Discard has closed the writer (guarded by mu)
	closed  atomic.Bool
	closing chan struct{}
	Stats   Counters

	immutable  bool            // read-only file system: opened with immutable=1
	probe      bool            // connections open in exclusive locking mode (see probeNeeded)
	probeDSN   string          // the read-write URI a read-only DB probes with
	companions map[string]bool // -wal, -shm, -journal files that existed before Open
	file       os.FileInfo     // the file Open found at the path (fileid.go)

	shmTried   bool          // a reader tried to map the WAL index (guarded by mu)
	shm        shmPtr        // the mapped WAL index, when readers may hold transactions
	sweepArmed atomic.Bool   // a sweep of idle held transactions is scheduled
	sweepEpoch atomic.Uint64 // sweeps run so far
	sweeping   atomic.Int32  // sweeps running: readers are briefly out of the pool

	ckpt *checkpointer // automatic checkpoints off the commit path; nil: none (checkpoint.go)
}

// Memory reports whether the database is an in-memory store (Config.Path
// "": a private file on a memory-backed file system, removed at Close).
func (db *DB) Memory() bool { return db.memDir != "" }

// Config returns the configuration the DB was opened with.
func (db *DB) Config() Config { return db.cfg }

// AcquireWriter waits (up to the busy timeout, or until ctx ends) for the
// single writer connection.
func (db *DB) AcquireWriter(ctx context.Context) (*Conn, error) {
	if db.closed.Load() {
		return nil, ErrClosed
	}
	if db.writer == nil {
		return nil, ErrReadOnly
	}
	select {
	case c := <-db.writer:
		return db.checkWriter(c)
	default:
	}
	t := time.NewTimer(db.cfg.BusyTimeout)
	defer t.Stop()
	select {
	case c := <-db.writer:
		return db.checkWriter(c)
	case <-db.closing:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		db.Stats.Busy.Add(1)
		return nil, fmt.Errorf("%w: waited %v for the writer held by another transaction in this process", ErrBusy, db.cfg.BusyTimeout)
	}
}

func (db *DB) checkWriter(c *Conn) (*Conn, error) {
	if db.closed.Load() {
		db.writer <- c
		return nil, ErrClosed
	}
	if c.broke {
		fixed, err := db.repairWriter(c)
		if err != nil {
			db.writer <- c
			return nil, err
		}
		c = fixed
	}
	db.ckpt.settle(c) // a commit left the WAL past its bound (checkpoint.go)
	return c, nil
}

// TryUpdate runs fn in a write transaction only if that costs no waiting:
// the in-process writer is idle and no other process holds the file's write
// lock. It reports whether fn ran and committed. Reads use it to delete
// expired keys on the side, where waiting would stall the read.
func (db *DB) TryUpdate(fn func(c *Conn) error) bool {
	if db.closed.Load() || db.writer == nil {
		return false
	}
	var c *Conn
	select {
	case c = <-db.writer:
	default:
		return false
	}
	c, err := db.checkWriter(c)
	if err != nil {
		return false
	}
	defer db.ReleaseWriter(c)
	ctx := context.Background()
	c.setBusyTimeout(0)
	defer c.setBusyTimeout(db.cfg.BusyTimeout)
	if c.Control(ctx, "BEGIN IMMEDIATE") != nil {
		return false
	}
	if fn(c) != nil {
		if c.Control(ctx, "ROLLBACK") != nil {
			c.MarkBroken()
		}
		return false
	}
	if c.Control(ctx, "COMMIT") != nil {
		if c.Control(ctx, "ROLLBACK") != nil {
			c.MarkBroken()
		}
		return false
	}
	db.Stats.Commits.Add(1)
	return true
}

// ReleaseWriter returns the writer connection.
func (db *DB) ReleaseWriter(c *Conn) { db.writer <- c }

// repairWriter replaces a writer left inside a transaction it could not
// end with a fresh connection or, failing that, rolls the old one back. A
// writer still inside a transaction is never handed out: a write on it
// would join that transaction and be lost with it.
func (db *DB) repairWriter(c *Conn) (*Conn, error) {
	if fresh, err := db.openSame(func() (*Conn, error) { return db.newConn(true) }); err == nil {
		_ = c.close()
		return fresh, nil
	}
	if err := c.Control(context.Background(), "ROLLBACK"); err != nil && !noTx(err) {
		return nil, fmt.Errorf("snkv: the writer is stuck in a transaction it cannot end: %w", Wrap(context.Background(), "rollback", err))
	}
	c.broke = false
	return c, nil
}

// AcquireReader returns an idle reader outside any transaction (a held one
// is ended), opening one if fewer than MaxReaders are open, else waits up
// to the busy timeout. Give it back with ReleaseReader. (AcquireSnapshot
// returns one inside a read transaction, which it may reuse.)
func (db *DB) AcquireReader(ctx context.Context) (*Conn, error) {
	c, err := db.takeReader(ctx)
	if err != nil {
		return nil, err
	}
	c.endRead()
	return c, nil
}

// takeReader is AcquireReader without ending a held read transaction.
func (db *DB) takeReader(ctx context.Context) (*Conn, error) {
	if db.closed.Load() {
		return nil, ErrClosed
	}
	var t *time.Timer
	for {
		select {
		case c := <-db.readers:
			return c, nil
		default:
		}
		// While a sweep has the idle readers out of the pool, wait for
		// them rather than open another.
		if db.sweeping.Load() == 0 {
			if c, ok, err := db.openReader(ctx); ok {
				return c, err
			}
		}
		if t == nil {
			t = time.NewTimer(db.cfg.BusyTimeout)
			defer t.Stop()
		}
		select {
		case c := <-db.readers:
			return c, nil
		case <-db.freed:
			// A slot opened: try again.
		case <-db.closing:
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
			db.Stats.Busy.Add(1)
			return nil, fmt.Errorf("%w: all %d read connections stayed in use for %v (open iterators or transactions)", ErrBusy, db.cfg.MaxReaders, db.cfg.BusyTimeout)
		}
	}
}

// openReader opens a new reader if fewer than MaxReaders are open; ok
// reports whether it tried.
func (db *DB) openReader(ctx context.Context) (c *Conn, ok bool, err error) {
	db.mu.Lock()
	if db.nOpen >= db.cfg.MaxReaders {
		db.mu.Unlock()
		return nil, false, nil
	}
	db.nOpen++
	db.mu.Unlock()
	c, err = db.newReader()
	if err != nil {
		db.readerClosed()
		return nil, true, Wrap(ctx, "open reader", err)
	}
	return c, true, nil
}

// readerClosed accounts for a reader that was closed and wakes a waiter.
func (db *DB) readerClosed() {
	db.mu.Lock()
	db.nOpen--
	last := db.nOpen == 0
	ended := db.ended
	db.mu.Unlock()
	if last {
		db.closeShm()
		if ended {
			db.removeMemory() // the last connection of a closed store
		}
	}
	db.signalFreed()
}

// signalFreed wakes a reader waiter, if any.
func (db *DB) signalFreed() {
	select {
	case db.freed <- struct{}{}:
	default:
	}
}

// ReleaseReader returns a reader to the pool (or closes it once the DB is
// closed).
func (db *DB) ReleaseReader(c *Conn) {
	if !db.closed.Load() && !c.broke {
		select {
		case db.readers <- c:
			// Close may have drained the pool between the check and the send.
			if db.closed.Load() {
				db.drainReaders()
			}
			return
		default:
		}
	}
	_ = c.close()
	db.readerClosed()
}

func (db *DB) drainReaders() {
	for {
		select {
		case c := <-db.readers:
			_ = c.close()
			db.readerClosed()
		default:
			return
		}
	}
}

// OpenReaders reports how many read connections are open.
func (db *DB) OpenReaders() int {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.nOpen
}

// Closed reports whether Close has been called.
func (db *DB) Closed() bool { return db.closed.Load() }

// Close waits for the running write transaction (if any), then closes every
// connection. Readers still held by open iterators close when released.
func (db *DB) Close() error {
	if !db.closed.CompareAndSwap(false, true) {
		return ErrClosed
	}
	close(db.closing)
	var errs []error
	// Idle readers go first: their held read transactions would keep the
	// checkpoint below from finishing.
	db.drainReaders()
	if db.writer != nil {
		db.ckpt.interrupt() // a commit may be waiting for a pass (catchUp)
		w := <-db.writer
		db.ckpt.stop(false)
		if db.memDir == "" && db.cfg.Journal == "WAL" {
			// Fold the WAL back so the file is self-contained after Close,
			// if no reader (an open cursor, another process) is in the way:
			// Close does not wait the busy timeout for them.
			_ = w.ExecScript(context.Background(), "PRAGMA busy_timeout = 0")
			_ = w.ExecScript(context.Background(), "PRAGMA wal_checkpoint(TRUNCATE)")
		}
		errs = append(errs, w.close())
	}
	db.drainReaders()
	db.closeShm() // if no reader is still held by a cursor
	db.writerEnded()
	return errors.Join(errs...)
}

// writerEnded records that Close or Discard has closed the writer, and
// removes an in-memory store's files if no reader is open either (else the
// last reader to close does).
func (db *DB) writerEnded() {
	db.mu.Lock()
	db.ended = true
	none := db.nOpen == 0
	db.mu.Unlock()
	if none {
		db.removeMemory()
	}
}

// Counters are the store's activity counters, updated atomically.
type Counters struct {
	Puts, Gets, Deletes, Hits, Misses atomic.Uint64
	BytesRead, BytesWritten           atomic.Uint64
	Commits, Rollbacks                atomic.Uint64
	Iterators, ExpiredOnRead, Purged  atomic.Uint64
	Busy                              atomic.Uint64
	HeldReads                         atomic.Uint64 // reads that reused a held read transaction
	Unverified                        atomic.Uint64 // rows read that carry no checksum
}

// WithReader runs fn on an idle reader.
func (db *DB) WithReader(ctx context.Context, fn func(c *Conn) error) error {
	c, err := db.AcquireReader(ctx)
	if err != nil {
		return err
	}
	defer db.ReleaseReader(c)
	return fn(c)
}

// WithWriter runs fn on the writer, outside any transaction, once no
// automatic checkpoint is running (see checkpoint.go): fn may checkpoint
// without finding the checkpointer in its way.
func (db *DB) WithWriter(ctx context.Context, fn func(c *Conn) error) error {
	c, err := db.AcquireWriter(ctx)
	if err != nil {
		return err
	}
	defer db.ReleaseWriter(c)
	defer db.waitCheckpoint()()
	return fn(c)
}

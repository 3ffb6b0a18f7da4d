package engine

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is the resolved configuration of a DB. kvstore.Options is turned
// into a Config after validation; every field here is already valid.
type Config struct {
	Path     string // "" opens a private in-memory database
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
	cfg     Config
	dsn     string
	memory  bool
	writer  chan *Conn    // holds the idle writer; nil for read-only stores
	readers chan *Conn    // idle readers
	freed   chan struct{} // a reader was closed: a waiter may open another
	mu      sync.Mutex
	nOpen   int // readers open, idle or in use
	closed  atomic.Bool
	closing chan struct{}
	Stats   Counters

	immutable  bool            // read-only file system: opened with immutable=1
	probe      bool            // connections open in exclusive locking mode (see probeNeeded)
	probeDSN   string          // the read-write URI a read-only DB probes with
	companions map[string]bool // -wal, -shm, -journal files that existed before Open

	shmTried   bool          // a reader tried to map the WAL index (guarded by mu)
	shm        shmPtr        // the mapped WAL index, when readers may hold transactions
	sweepArmed atomic.Bool   // a sweep of idle held transactions is scheduled
	sweepEpoch atomic.Uint64 // sweeps run so far
	sweeping   atomic.Int32  // sweeps running: readers are briefly out of the pool

	ckpt *checkpointer // automatic checkpoints off the commit path; nil: none (checkpoint.go)
}

var memSeq atomic.Uint64

// Open opens the connections described by cfg. The writer (when there is
// one) is opened at once, so a bad path or a non-database file fails here.
func Open(cfg Config) (*DB, error) {
	if cfg.MaxReaders <= 0 {
		cfg.MaxReaders = max(8, 4*runtime.GOMAXPROCS(0))
	}
	db := &DB{cfg: cfg, closing: make(chan struct{}), readers: make(chan *Conn, cfg.MaxReaders), freed: make(chan struct{}, 1)}
	if cfg.Path == "" {
		db.memory = true
		db.dsn = fmt.Sprintf("file:/snkv-mem-%d-%d?vfs=memdb", os.Getpid(), memSeq.Add(1))
	} else {
		if err := checkPath(cfg.Path); err != nil {
			return nil, err
		}
		st, err := os.Stat(cfg.Path)
		if errors.Is(err, os.ErrNotExist) && !cfg.ReadOnly {
			// A new store: made here with the mode asked for, so that SQLite
			// (which gives -wal, -shm and -journal the store file's mode)
			// never makes one with its own default.
			if err = createFile(cfg.Path, db.fileMode()); err == nil {
				st, err = os.Stat(cfg.Path)
			}
		}
		switch {
		case err == nil && st.IsDir():
			return nil, fmt.Errorf("snkv: open %q: %w: is a directory", cfg.Path, ErrCantOpen)
		case err != nil && cfg.ReadOnly:
			return nil, fmt.Errorf("snkv: open %q read-only: %w: %w", cfg.Path, ErrCantOpen, err)
		case err == nil:
			if err := checkHeader(cfg.Path, st.Size()); err != nil {
				return nil, err
			}
		}
		dsn, err := fileURI(cfg.Path)
		if err != nil {
			return nil, err
		}
		if cfg.ReadOnly {
			dsn += "?mode=ro"
			if readOnlyFS(cfg.Path) {
				// See readOnlyFS: nobody can write the file, so SQLite may
				// read it without locks or a -shm file.
				dsn += "&immutable=1"
				db.immutable = true
			}
		}
		db.dsn = dsn
		db.companions = existingCompanions(cfg.Path)
		if !cfg.NoProbe && !db.immutable && probeNeeded(cfg.Path) && (!cfg.ReadOnly || writable(cfg.Path)) {
			db.probe = true
			db.probeDSN, _ = fileURI(cfg.Path) // checked above
		}
	}
	if !cfg.ReadOnly {
		if err := staleCompanions(cfg.Path); err != nil {
			return nil, err
		}
		db.ckpt = newCheckpointer(db)
		w, err := db.newConn(true)
		if err != nil {
			db.ckpt.stop(true)
			db.removeNewCompanions()
			return nil, Wrap(context.Background(), fmt.Sprintf("open %q", cfg.Path), err)
		}
		db.ownerWritableCompanions()
		db.writer = make(chan *Conn, 1)
		db.writer <- w
	} else {
		// Open one reader now so that a missing or corrupt file fails Open.
		r, err := db.AcquireReader(context.Background())
		if err != nil {
			db.removeNewCompanions()
			return nil, err
		}
		db.ownerWritableCompanions()
		db.ReleaseReader(r)
	}
	return db, nil
}

// checkPath refuses a path SQLite would read differently from the file
// system: empty, or containing a NUL byte (which C strings end at, so the
// path would silently name another file).
func checkPath(path string) error {
	switch {
	case path == "":
		return fmt.Errorf("snkv: %w: empty path", ErrCantOpen)
	case strings.IndexByte(path, 0) >= 0:
		return fmt.Errorf("snkv: %q: %w: the path contains a NUL byte", path, ErrCantOpen)
	}
	return nil
}

// sqliteMagic starts every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// Memory reports whether the database lives in memory.
func (db *DB) Memory() bool { return db.memory }

// Config returns the configuration the DB was opened with.
func (db *DB) Config() Config { return db.cfg }

// fileURI turns a filesystem path into a SQLite file: URI, escaping the
// characters that URIs give meaning to, so that no part of the path is ever
// read as a parameter.
func fileURI(path string) (string, error) {
	if err := checkPath(path); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("snkv: open %q: %w: %w", path, ErrCantOpen, err)
	}
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // Windows drive letter paths
	}
	return "file:" + (&url.URL{Path: p}).EscapedPath(), nil
}

// WriterTempStore is the writer's temp_store setting, and VacuumTempStore
// the one VACUUM runs with (its temporary copy of the whole file belongs on
// disk, not in memory).
const (
	WriterTempStore = "PRAGMA temp_store = MEMORY"
	VacuumTempStore = "PRAGMA temp_store = DEFAULT"
)

func (db *DB) newConn(writer bool) (*Conn, error) {
	dsn := db.dsn
	if db.probe && db.cfg.ReadOnly {
		// Exclusive locking needs a descriptor open for writing; the
		// connection is still query-only (see probeNeeded).
		dsn = db.probeDSN
	}
	c, err := openConn(dsn)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	cfg := db.cfg
	c.setBusyTimeout(cfg.BusyTimeout)
	pragmas := []string{
		"PRAGMA foreign_keys = OFF",
		"PRAGMA recursive_triggers = OFF",
	}
	if db.probe {
		// Before the first read: the WAL index then lives in this
		// connection's memory, and the -shm file is never opened. Closing
		// it never checkpoints: a refused file keeps its WAL, and a
		// read-only open writes nothing.
		c.noCheckpointOnClose()
		c.setBusyTimeout(0)
		pragmas = append(pragmas, "PRAGMA locking_mode = EXCLUSIVE")
	}
	if cfg.CacheKiB > 0 {
		pragmas = append(pragmas, fmt.Sprintf("PRAGMA cache_size = -%d", cfg.CacheKiB))
	}
	if cfg.MmapSize > 0 && !db.memory {
		// SQLite lowers it to its compile-time limit, and to 0 where
		// mapping is not supported.
		pragmas = append(pragmas, fmt.Sprintf("PRAGMA mmap_size = %d", cfg.MmapSize))
	}
	if writer {
		if cfg.PageSize > 0 {
			pragmas = append(pragmas, fmt.Sprintf("PRAGMA page_size = %d", cfg.PageSize))
		}
		pragmas = append(pragmas, "PRAGMA synchronous = "+cfg.Sync)
		// The writer's statement journals stay in memory. A statement that
		// may fail part way through (an upsert whose update fires the
		// checksum trigger) copies each page it changes to a statement
		// journal; one that outgrows 64 KiB (a page split) is moved to a
		// temporary file and stays a file until the transaction ends, so
		// every later statement's copy became a write system call: half
		// the CPU time of a bulk load. The only other temporary storage a
		// writer uses is VACUUM's copy of the file, which Store.Vacuum
		// runs with temp_store back at its default (VacuumTempStore).
		pragmas = append(pragmas, WriterTempStore)
		switch {
		case db.ckpt != nil && !db.probe:
			// The checkpointer's WAL hook replaces SQLite's automatic
			// checkpoint (checkpoint.go); it is installed below.
		case cfg.AutoCheckpoint > 0:
			pragmas = append(pragmas, fmt.Sprintf("PRAGMA wal_autocheckpoint = %d", cfg.AutoCheckpoint))
		case cfg.AutoCheckpoint < 0:
			pragmas = append(pragmas, "PRAGMA wal_autocheckpoint = 0")
		}
	} else {
		pragmas = append(pragmas, "PRAGMA query_only = 1")
	}
	if writer && cfg.SpillPages > 0 {
		// Raised by a transaction that writes many rows (Conn.bigTx).
		base, err := c.QueryInt(ctx, "PRAGMA cache_spill")
		if err != nil {
			_ = c.close()
			return nil, err
		}
		c.spillBase, c.spillBig = base, int64(cfg.SpillPages)
	}
	// Touch the file so that a garbage file fails now, not on first use.
	pragmas = append(pragmas, "SELECT count(*) FROM sqlite_schema")
	for _, p := range pragmas {
		if err := c.ExecScript(ctx, p); err != nil {
			_ = c.close()
			if db.probe && (Code(err) == codeBusy || Code(err) == codeIOErr) {
				// Another process has the file open: the WAL index in the
				// -shm is live, and reading it as every SQLite reader does
				// is all that can be done.
				db.probe = false
				return db.newConn(writer)
			}
			return nil, err
		}
	}
	if db.probe {
		c.setBusyTimeout(cfg.BusyTimeout)
	} else if writer && db.ckpt != nil {
		db.ckpt.install(c)
	}
	return c, nil
}

// SetJournalMode switches the file to the configured journal mode (WAL by
// default). That writes the file header, so it is done only once the file
// is known to be a store, or a new one: never to a file Open refuses.
func (db *DB) SetJournalMode(ctx context.Context, c *Conn) error {
	if db.memory || db.cfg.ReadOnly {
		return nil
	}
	return c.ExecScript(ctx, "PRAGMA journal_mode = "+db.cfg.Journal)
}

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
	if fresh, err := db.newConn(true); err == nil {
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
	c, err = db.newConn(false)
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
	db.mu.Unlock()
	if last {
		db.closeShm()
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
		if !db.memory && db.cfg.Journal == "WAL" {
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
	return errors.Join(errs...)
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

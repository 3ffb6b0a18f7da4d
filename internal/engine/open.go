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
	"time"
)

// Opening a DB: checking and creating the file, the DSN, and the
// connections with their pragmas.

// Open opens the connections described by cfg. The writer (when there is
// one) is opened at once, so a bad path or a non-database file fails here.
func Open(cfg Config) (*DB, error) {
	if cfg.MaxReaders <= 0 {
		cfg.MaxReaders = max(8, 4*runtime.GOMAXPROCS(0))
	}
	var memDir string
	if cfg.Path == "" {
		// An in-memory store: a WAL store in a private directory on a
		// memory-backed file system (memory.go), never synced.
		dir, err := newMemoryDir()
		if err != nil {
			return nil, err
		}
		memDir = dir
		cfg.Path = filepath.Join(dir, memoryFile)
		cfg.Journal, cfg.Sync, cfg.NoProbe = "WAL", "OFF", true
	}
	db := &DB{cfg: cfg, memDir: memDir, closing: make(chan struct{}), readers: make(chan *Conn, cfg.MaxReaders), freed: make(chan struct{}, 1)}
	if err := db.open(); err != nil {
		db.removeMemory()
		return nil, err
	}
	return db, nil
}

// open is Open once the DB is made: it checks the file, creating it if it
// is missing (unless read-only), and opens the first connection.
func (db *DB) open() error {
	cfg := db.cfg
	if err := checkPath(cfg.Path); err != nil {
		return err
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
		return fmt.Errorf("snkv: open %q: %w: is a directory", cfg.Path, ErrCantOpen)
	case err != nil && cfg.ReadOnly:
		return fmt.Errorf("snkv: open %q read-only: %w: %w", cfg.Path, ErrCantOpen, err)
	case err == nil:
		if err := checkHeader(cfg.Path, st.Size()); err != nil {
			return err
		}
		db.file = st
	}
	dsn, err := fileURI(cfg.Path)
	if err != nil {
		return err
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
	if v := memoryVFS(); db.memDir != "" && v != "" {
		dsn += "?vfs=" + v
	} else if v := walVFS(); db.memDir == "" && !cfg.ReadOnly && v != "" {
		// One write a WAL frame, reads of the WAL from a mapping (walvfs.go).
		dsn += "?vfs=" + v + walMapDSN(cfg.MmapSize)
	}
	db.dsn = dsn
	db.companions = existingCompanions(cfg.Path)
	if !cfg.NoProbe && !db.immutable && probeNeeded(cfg.Path) && (!cfg.ReadOnly || writable(cfg.Path)) {
		db.probe = true
		db.probeDSN, _ = fileURI(cfg.Path) // checked above
	}
	if !cfg.ReadOnly {
		if err := staleCompanions(cfg.Path); err != nil {
			return err
		}
		db.ckpt = newCheckpointer(db)
		w, err := db.newConn(true)
		if err != nil {
			db.ckpt.stop(true)
			db.removeNewCompanions()
			return Wrap(context.Background(), fmt.Sprintf("open %q", cfg.Path), err)
		}
		db.ownerWritableCompanions()
		db.writer = make(chan *Conn, 1)
		db.writer <- w
	} else {
		// Open one reader now so that a missing or corrupt file fails Open.
		r, err := db.AcquireReader(context.Background())
		if err != nil {
			db.removeNewCompanions()
			return err
		}
		db.ownerWritableCompanions()
		db.ReleaseReader(r)
	}
	return nil
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
	if db.memDir != "" {
		// Nothing of an in-memory store outlives it: its last connection
		// has no reason to copy the WAL into the file it is removed with.
		c.noCheckpointOnClose()
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
	if cfg.MmapSize > 0 {
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
//
// SQLite switches the mode in a read transaction that it then upgrades to
// a write, and never calls the busy handler for such an upgrade (waiting
// could deadlock with another reader doing the same), so the switch fails
// at once with SQLITE_BUSY when another connection holds a lock: another
// process creating the same store switches it too. The statement, which
// holds nothing once it has failed, is tried again, with pauses growing to
// 50 ms, until the busy timeout has passed or ctx ends.
func (db *DB) SetJournalMode(ctx context.Context, c *Conn) error {
	if db.cfg.ReadOnly {
		return nil
	}
	q := "PRAGMA journal_mode = " + db.cfg.Journal
	deadline := time.Now().Add(db.cfg.BusyTimeout)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		err := c.ExecScript(ctx, q)
		if Code(err) != codeBusy || !time.Now().Add(pause).Before(deadline) {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

package engine

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
	"unsafe"

	sqlite3 "modernc.org/sqlite/lib"
)

// Held read transactions.
//
// Starting and ending a read transaction costs a point read more than the
// read itself on a large store: SQLite takes and drops a WAL read lock
// (fcntl system calls on the -shm file) and revalidates its page cache. So a
// reader used through AcquireSnapshot keeps its read transaction open when it
// goes back to the pool, and the next AcquireSnapshot reuses it if, and only if,
// nothing has committed since: it compares the WAL-index header (the first
// 48 bytes of the -shm file, which every commit from any process rewrites:
// its frame count, salts and checksums change) with the copy it read before
// the transaction began. The copy is read before BEGIN and the snapshot is
// taken at the transaction's first read, after it, so an unchanged header
// proves that no commit completed between the snapshot and now; a changed
// one (or a torn one, mid-commit) ends the transaction and starts a new one.
// SQLite writes the header's second copy, then a barrier, then the first,
// and readers read them in the opposite order; the check does the same with
// atomic loads.
//
// An open read transaction keeps checkpoints from copying frames past its
// snapshot and the WAL from restarting, so an idle reader never holds one
// for long: a timer ends every transaction idle for between one and two
// Config.ReadHold periods, and
// Close and explicit checkpoints end them first. Held transactions are used
// only for files in WAL mode on platforms where the -shm file can be mapped
// (see shm_unix.go); elsewhere every read begins and ends its own.

// walHeader is the WAL-index header: 48 bytes in native byte order.
type walHeader [12]uint32

// walIndexVersion is the iVersion field of an initialised WAL-index header.
const walIndexVersion = 3007000

var errNoShm = errors.New("snkv: no mappable WAL index")

// shmView is SQLite's mapping of the start of the WAL index (see mapShm).
type shmView struct {
	p unsafe.Pointer
}

// header reads the WAL-index header the way SQLite's readers do: the first
// copy, then the second; ok is false when they differ (a commit is writing
// them) or the header is not initialised.
func (m *shmView) header() (h walHeader, ok bool) {
	w := (*[24]uint32)(m.p)
	for i := range h {
		h[i] = atomic.LoadUint32(&w[i])
	}
	for i := range h {
		if atomic.LoadUint32(&w[12+i]) != h[i] {
			return h, false
		}
	}
	return h, h[0] == walIndexVersion
}

// CommitMark identifies the last commit to the file, from any process: the
// WAL-index header, which every commit rewrites. Two equal marks read at two
// moments prove that nothing committed in between.
type CommitMark struct{ h walHeader }

// CommitMark returns the file's commit mark, without a system call or a
// lock; ok is false where there is no mapped WAL index (not WAL mode, a
// platform without the mapping, or before the first held read mapped it)
// or a commit is writing the header now.
func (db *DB) CommitMark() (m CommitMark, ok bool) {
	v := db.shm.Load()
	if v == nil {
		return m, false
	}
	m.h, ok = v.header()
	return m, ok
}

// ReadMode says what a read acquired with AcquireSnapshot needs.
type ReadMode int

const (
	// ReadPoint is one statement: where no transaction can be held, it runs
	// in autocommit mode.
	ReadPoint ReadMode = iota
	// ReadMulti is several statements on one snapshot, taken at the first.
	ReadMulti
	// ReadPinned is several statements on one snapshot taken now.
	ReadPinned
)

// holdState is a reader's read transaction begun by AcquireSnapshot.
type holdState struct {
	open bool      // inside a read transaction begun by AcquireSnapshot
	keep bool      // hdr was read whole: the transaction may be kept open
	hdr  walHeader // the WAL-index header read before it began
	idle uint64    // the sweep epoch when it went back to the pool
	// gen is the DB's checkpointGen read before it began. A transaction
	// that began while the WAL held frames not yet in the database file
	// looks every page up in the WAL index and reads the WAL's pages with
	// a system call each, for as long as it lasts; once the checkpointer
	// has copied the whole WAL, a new one reads the database file alone
	// (through the memory mapping). So a held transaction is not reused
	// across such a checkpoint.
	gen uint64
}

// reusable reports whether c's held read transaction may serve a read that
// must see every commit completed before now (see the top of the file).
func (db *DB) reusable(c *Conn) bool {
	m := db.shm.Load()
	if m == nil || !c.inTx() || c.hold.gen != db.checkpointGen() {
		return false
	}
	h, ok := m.header()
	return ok && h == c.hold.hdr
}

// shmFor maps the WAL index of the file c is open on, once per DB. A store
// that is not in WAL mode, or on a platform without the mapping
// gets nil: its readers never keep a transaction open. Without ReadHold
// the mapping is made all the same, for CommitMark.
func (db *DB) shmFor(ctx context.Context, c *Conn) *shmView {
	if m := db.shm.Load(); m != nil {
		return m
	}
	db.mu.Lock()
	tried := db.shmTried
	db.shmTried = true
	db.mu.Unlock()
	if tried {
		return nil
	}
	func() {
		if db.immutable {
			return // no -shm file to watch
		}
		rows, err := c.Query(ctx, "PRAGMA journal_mode")
		if err != nil {
			return
		}
		wal := rows.Next() && string(rows.RawBytes(0)) == "wal"
		if rows.Close() != nil || !wal {
			return
		}
		m, err := mapShm(c)
		if err != nil {
			return
		}
		if _, ok := m.header(); !ok {
			return
		}
		db.shm.Store(m)
	}()
	return db.shm.Load()
}

// AcquireSnapshot returns a reader inside a read transaction that sees
// every commit completed before the call: either a held read transaction
// that nothing has committed after, or a new one (none for ReadPoint where
// none can be held). Give it back with ReleaseSnapshot. (AcquireReader
// returns a reader outside any transaction.)
func (db *DB) AcquireSnapshot(ctx context.Context, mode ReadMode) (*Conn, error) {
	db.ckpt.noteRead()
	c, err := db.takeReader(ctx)
	if err != nil {
		return nil, err
	}
	if c.hold.open {
		if db.reusable(c) {
			db.Stats.HeldReads.Add(1)
			return c, nil
		}
		c.endRead()
	}
	if err := db.beginRead(ctx, c, mode); err != nil {
		db.ReleaseReader(c)
		return nil, Wrap(ctx, "begin read", err)
	}
	return c, nil
}

// FreshenSnapshot makes a reader from AcquireSnapshot(ReadMulti) see every commit
// completed before this call: a held read transaction reused by
// AcquireSnapshot is replaced when something has committed since. A cursor
// calls it when first positioned, where its snapshot is documented to be
// taken.
func (db *DB) FreshenSnapshot(ctx context.Context, c *Conn) error {
	if !c.hold.open || !c.hold.keep {
		return nil // no transaction, or one whose snapshot is not taken yet
	}
	if db.reusable(c) {
		return nil
	}
	c.endRead()
	return db.beginRead(ctx, c, ReadMulti)
}

func (db *DB) beginRead(ctx context.Context, c *Conn, mode ReadMode) error {
	m := db.shmFor(ctx, c)
	if db.cfg.ReadHold <= 0 {
		// No transaction is held: the mapping serves only CommitMark (a
		// tailing change feed reader waits on it instead of polling).
		m = nil
	}
	if m == nil && mode == ReadPoint {
		return nil
	}
	var h walHeader
	keep := false
	gen := db.checkpointGen()
	if gen != c.cacheGen {
		c.cacheGen = gen
		db.dropWALPages(c)
	}
	if m != nil {
		h, keep = m.header() // before BEGIN: see the comment at the top
	}
	if err := c.Control(ctx, "BEGIN"); err != nil {
		return err
	}
	c.hold = holdState{open: true, keep: keep, hdr: h, gen: gen}
	if mode == ReadPinned {
		// A deferred transaction takes its snapshot at the first read.
		if _, err := c.Exec(ctx, "SELECT 1 FROM sqlite_schema LIMIT 1"); err != nil {
			c.endRead()
			return err
		}
	}
	return nil
}

// dropWALPages empties the page cache of reader c, which is between read
// transactions, once the checkpointer has copied the whole WAL since c
// last began one (cacheGen). With the database file memory-mapped, a
// reader's cache holds only pages it read from the WAL (the mapping
// serves the file's), and a transaction that begins after a full copy
// reads none: what it cached is never read again, yet SQLite keeps it
// until the connection closes, up to the cache's size (about 2.1 MiB with
// the default). A reader whose transaction began while the checkpointer
// was copying a large commit filled it so. Without the mapping the cache
// serves the file too and is kept.
func (db *DB) dropWALPages(c *Conn) {
	if db.cfg.MmapSize > 0 && !c.inTx() {
		sqlite3.Xsqlite3_db_release_memory(c.tls, c.db)
	}
}

// ReleaseSnapshot gives back a reader from AcquireSnapshot. Its read transaction
// stays open for the next AcquireSnapshot when it can be checked later;
// otherwise it ends now.
func (db *DB) ReleaseSnapshot(c *Conn) {
	if c.hold.open {
		if c.hold.keep && !c.broke && !db.closed.Load() && c.inTx() {
			c.hold.idle = db.sweepEpoch.Load() // cheaper than reading the clock
			db.ReleaseReader(c)
			db.armSweep()
			return
		}
		c.endRead()
	}
	db.ReleaseReader(c)
}

// inTx reports whether c is inside a transaction (SQLite may end one on its
// own after some errors).
func (c *Conn) inTx() bool { return sqlite3.Xsqlite3_get_autocommit(c.tls, c.db) == 0 }

// endRead ends the read transaction begun by AcquireSnapshot, if any.
func (c *Conn) endRead() {
	if !c.hold.open {
		return
	}
	c.hold = holdState{}
	if !c.inTx() {
		return
	}
	if err := c.Control(context.Background(), "COMMIT"); err != nil {
		if c.Control(context.Background(), "ROLLBACK") != nil {
			c.MarkBroken()
		}
	}
}

// armSweep makes sure a sweep runs within ReadHold.
func (db *DB) armSweep() {
	if db.sweepArmed.CompareAndSwap(false, true) {
		time.AfterFunc(db.cfg.ReadHold, db.sweep)
	}
}

// sweep ends the held transactions of readers released before the previous
// sweep, so idle for at least ReadHold (and at most about twice that), and
// runs again while others remain.
func (db *DB) sweep() {
	db.sweepArmed.Store(false)
	epoch := db.sweepEpoch.Add(1)
	if db.dropHeld(func(c *Conn) bool { return c.hold.idle+2 <= epoch }) {
		db.armSweep()
	}
}

// DropHeld ends the read transactions of every idle reader, so that a
// checkpoint about to run is not held up by them.
func (db *DB) DropHeld() { db.dropHeld(func(*Conn) bool { return true }) }

// RetireHeld ends every read transaction the store's readers hold between
// reads: an idle reader's now, and one that a read is using when that read
// gives it back (it is not reused). Reads that begin afterwards start new
// transactions, which, once a checkpoint has copied the whole WAL, read the
// database file alone. A checkpoint that must wait for every reader of the
// WAL (a TRUNCATE: a conversion's scrub) is then held up only by the reads
// in progress, even when the pool is never idle.
func (db *DB) RetireHeld() {
	db.retired.Add(1)
	db.DropHeld()
}

// dropHeld ends the held read transactions of idle readers that old says
// are old enough; it reports whether some younger ones remain.
func (db *DB) dropHeld(old func(c *Conn) bool) (remain bool) {
	db.sweeping.Add(1)
	defer func() {
		db.sweeping.Add(-1)
		// A waiter may have skipped opening a reader while the pool was
		// being swept.
		db.signalFreed()
	}()
	for range cap(db.readers) {
		var c *Conn
		select {
		case c = <-db.readers:
		default:
			return remain
		}
		if c.hold.open {
			if old(c) {
				c.endRead()
			} else {
				remain = true
			}
		}
		db.ReleaseReader(c)
	}
	return remain
}

// HeldShm reports whether readers may keep read transactions open (the WAL
// index is mapped); for tests.
func (db *DB) HeldShm() bool { return db.shm.Load() != nil }

// closeShm forgets the WAL-index mapping once no reader is open: it is
// SQLite's (see mapShm), valid only while a connection of this process has
// the file open in WAL mode, and the writer may not have (it opens the WAL
// at its first transaction). The next reader asks SQLite for it afresh.
// Header reads happen only on an open reader, and openReader counts a
// reader under db.mu before its first read.
func (db *DB) closeShm() {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.nOpen != 0 {
		return
	}
	db.shm.Store(nil)
	db.shmTried = false
}

// shmPtr is the type of DB.shm.
type shmPtr = atomic.Pointer[shmView]

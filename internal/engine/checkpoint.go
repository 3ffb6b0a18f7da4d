package engine

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// Automatic checkpoints, off the commit path.
//
// SQLite's automatic checkpoint (wal_autocheckpoint) runs inside the commit
// that leaves the WAL at or past its threshold: that commit copies every
// page of the WAL into the database file and syncs both files before it
// returns, and a transaction that changed 10,000 pages waits for 10,000
// more page writes and two syncs. A store in WAL mode with a writer does
// this on a goroutine of its own instead:
//
//   - The writer's connection has a WAL hook in place of SQLite's automatic
//     checkpoint. After every commit it records the WAL's size, and when
//     the size is at or past the threshold (Config.AutoCheckpoint pages) it
//     wakes the checkpointer.
//   - The checkpointer runs a PASSIVE checkpoint on a connection of its own:
//     it copies what no reader still needs while the writer goes on
//     committing. The writer restarts the WAL from its start at its next
//     transaction once the whole WAL has been copied and no reader reads it
//     (SQLite's rule), so the WAL file stays about the threshold's size.
//   - Under a steady stream of commits the checkpointer may never catch up
//     at a moment when the writer begins a transaction, and then the WAL is
//     never restarted: it would grow without bound. So once a commit leaves
//     the WAL at 7/4 of its size at the commit that woke the checkpointer
//     (or of the threshold, or at twice the largest commit since the
//     restart, if more), the writer's next transaction that finds no
//     pass in progress copies the rest itself before it begins (settle),
//     as SQLite's automatic checkpoint would have at the commit, and
//     restarts the WAL; a pass in progress, seeing that, does not pass
//     again. Only once the WAL is at twice that bound does a transaction
//     wait for the pass in progress: a pass (the threshold's pages and
//     two syncs) takes milliseconds, and lone commits back to back used
//     to wait for it once a WAL cycle. The commit itself returns at once and
//     wakes the checkpointer, which copies its frames meanwhile: a burst of
//     large transactions followed by reads (10,000 updates, 5,000 deletes,
//     then 20,000 mixed operations in one transaction) no longer waits at
//     its last commit for the copy of its own frames (86 ms). Under small
//     commits the WAL thus stays below 7/4 of the threshold plus what the
//     writer commits during one pass, and always below 7/2 of it plus one
//     commit (SQLite's automatic checkpoint keeps it at the threshold), and
//     a large transaction's frames are copied in the background unless the
//     writer commits as much again and begins another transaction before
//     the checkpointer is done with them (10,000 random updates on a
//     1M-key store write about 8,000 frames and the 5,000 random deletes
//     that follow about 4,500 more: three quarters would have had the
//     transaction after them copy it all).
//   - Commits made during a pass wake no other; once it ends, the
//     goroutine passes again while the WAL holds a quarter of the
//     threshold or more past what the last pass copied, unless the WAL
//     is past its bound (the writer's next transaction copies the rest).
//   - Idle readers in the pool may hold a read transaction (snapshot.go).
//     A pass first ends those begun before the last commit, and a pass
//     that copied the whole WAL ends those begun before it: none can
//     serve another read, and they would keep the pass from copying past
//     their snapshot or the writer from restarting the WAL.
//   - A pass that readers keep from finishing (a cursor or read
//     transaction on an older snapshot) is retried at the next commit, as
//     SQLite's automatic checkpoint is; while readers keep the WAL from
//     restarting, nothing keeps it from growing, as before.
//   - A pass woken by a large commit (the threshold's worth of frames
//     on its own) waits for the store to be idle: no write transaction
//     in progress, no commit and no read begun for 5 ms, and no
//     read in progress (foregroundIdle). Large transactions back to back
//     (10,000 random updates, then 5,000 random deletes) rewrite many of
//     the same pages: one pass after the burst copies each page once,
//     and syncs both files once, where a pass per commit copied the pages
//     of the first while the second ran and then most of them again (a
//     pass of 8,000 pages costs about 36 ms of CPU, two thirds of it the
//     two syncs); and a pass run beside the reads that follow adds its
//     CPU to theirs (on one CPU it takes that CPU from them). A store
//     that is never idle still has its WAL copied after a bounded delay:
//     one write transaction at most is waited for (with more than one
//     CPU), reads that never pause hold the pass off for half a second
//     at most, and once the WAL has grown past its bound (the writer's
//     next transaction would copy it) the pass runs at once.
//   - A run of commits that one call makes (the batched purge) holds all
//     of this off until it ends, unless its WAL grows past a hard bound,
//     and then has one pass copy what it left (checkpoint_hold.go).
//   - Errors of a pass (I/O, a checkpoint of another process in the way)
//     are dropped, as SQLite drops those of its automatic checkpoints; the
//     next commit past the threshold tries again, and the WAL keeps every
//     commit safe meanwhile.
//
// Close stops the checkpointer (interrupting a pass in progress) before it
// runs its own final checkpoint. WithWriter waits for a running pass, so
// an explicit checkpoint on the writer never finds the checkpointer's lock
// taken. A store opened read-only, with a rollback journal or
// with automatic checkpoints off (Config.AutoCheckpoint < 0) has none.

// defaultAutoCheckpoint is SQLite's default wal_autocheckpoint, used when
// Config.AutoCheckpoint is 0.
const defaultAutoCheckpoint = 1000

// checkpointer runs the automatic checkpoints of one DB (see above).
type checkpointer struct {
	db        *DB
	id        uintptr      // the WAL hook's argument: this checkpointer's key in walHooks
	threshold int64        // WAL frames after a commit that start a pass
	frames    atomic.Int64 // WAL frames after the writer's last commit
	// woke is the WAL's size at the commit that first woke the
	// checkpointer since the WAL last restarted (0: none did), and salt
	// the WAL's salt then (a restart changes it); a commit that leaves
	// the WAL at 7/4 of woke, or of the threshold if larger, has the
	// next transaction copy it first (see settle). Only the writer's WAL
	// hook uses them.
	woke int64
	// big is the most frames one commit added to the WAL since it last
	// restarted: the bound is twice it if more, so that one large
	// transaction on a WAL a few small commits had woken the
	// checkpointer for (10,000 random updates after a load that left a
	// tail) does not have the next transaction copy it all itself.
	big       int64
	salt      [2]uint32
	saltKnown bool
	shm       atomic.Pointer[shmView] // the WAL index, mapped by the checkpointer's connection
	kick      chan struct{}           // a commit left the WAL at or past threshold
	// passing is set by the commit that wakes the checkpointer and
	// cleared when its pass ends: no commit queues a second pass behind
	// one in progress.
	passing atomic.Bool
	// last is what the last pass left: the WAL's salt before it began
	// and the frames it had copied into the database file when it ended
	// (see committed).
	last atomic.Pointer[passEnd]
	// tailed is set when a commit of the current WAL cycle copied a
	// pass's tail itself; the writer's WAL hook only uses it.
	tailed bool
	// due is set by a commit that left the WAL past its bound: the
	// writer's next transaction copies the WAL first (settle), or the
	// first that finds no pass in progress; must is set by one that left
	// it past twice its bound (or past a run's bound): the next
	// transaction then waits for a pass in progress. Only the writer's
	// holder uses them.
	due     bool
	must    bool
	started atomic.Bool   // the goroutine runs (it starts at the first kick)
	done    chan struct{} // closed when the goroutine has returned
	// mu is held by a pass. Lock order: the writer, then mu.
	mu sync.Mutex
	// writerHasMu is set while the goroutine that holds the writer holds
	// mu too (WithWriter): its commits' catchUp must not lock mu again.
	// Only the writer's holder uses it.
	writerHasMu bool
	conn        *Conn // opened by the first pass; guarded by mu
	// connMu orders Close's interrupt of a pass against the connection's
	// opening and closing.
	connMu sync.Mutex
	// gen counts passes that copied the whole WAL they saw: a reader that
	// began its read transaction before one reads pages from the WAL that
	// a new transaction would read from the database file (see
	// holdState.gen).
	gen   atomic.Uint64
	stats CheckpointStats
	// watching is set while the goroutine waits for the store to be idle
	// (foregroundIdle); reads then count themselves in reads.
	watching atomic.Bool
	reads    atomic.Uint64
	// commits counts the writer's commits that wrote frames
	// (foregroundIdle waits for it to stay still).
	commits atomic.Uint64
	// overdue is set while the writer's next transaction is to copy the
	// WAL itself (due): a pass waiting for the store to be idle runs at
	// once (foregroundIdle).
	overdue atomic.Bool
	// wokeBig is set when the commit that woke the checkpointer wrote a
	// threshold of frames or more on its own: the pass then waits for
	// the writer to pause (foregroundIdle).
	wokeBig atomic.Bool
	// idleTimeouts counts the waits for an idle store (foregroundIdle)
	// that ended at idleWait rather than at a pause; idleWaitTest, when
	// set (by tests only), replaces idleWait (nanoseconds).
	idleTimeouts atomic.Uint64
	idleWaitTest atomic.Int64
	// afterPass, when set (by tests only), runs after each pass of the
	// goroutine.
	afterPass atomic.Pointer[func()]
	// hold counts the open runs of commits (checkpoint_hold.go); holding
	// is set while one is open, holdBase is the WAL's size when the first
	// began (0 once the WAL restarted), and heldBack is set when a commit
	// of a run woke no pass or copied nothing that it would have.
	hold     runHold
	holding  atomic.Bool
	holdBase atomic.Int64
	heldBack atomic.Bool
}

// CheckpointStats counts the automatic checkpoints of a DB.
type CheckpointStats struct {
	Passes       atomic.Uint64 // checkpoints run by the checkpointer
	Complete     atomic.Uint64 // passes that copied the whole WAL they saw
	WriterPasses atomic.Uint64 // passes run on the writer (see catchUp, settle)
	WriterWaits  atomic.Uint64 // transactions that waited for a pass in progress (settle)
	Errors       atomic.Uint64 // passes that failed (dropped)
}

// walHooks maps a WAL hook's argument to its checkpointer.
var (
	walHooks   sync.Map // uintptr → *checkpointer
	walHookSeq atomic.Uintptr
)

// newCheckpointer returns the checkpointer of db, or nil when db gets none.
func newCheckpointer(db *DB) *checkpointer {
	cfg := db.cfg
	if cfg.ReadOnly || cfg.Journal != "WAL" || cfg.AutoCheckpoint < 0 {
		return nil
	}
	n := int64(cfg.AutoCheckpoint)
	if n == 0 {
		n = defaultAutoCheckpoint
	}
	k := &checkpointer{
		db: db, id: walHookSeq.Add(1), threshold: n,
		kick: make(chan struct{}, 1), done: make(chan struct{}),
	}
	walHooks.Store(k.id, k)
	return k
}

// walHook is the writer's WAL hook: SQLite calls it after each commit that
// wrote frames, with the WAL's size in frames, on the committing goroutine
// (which holds the writer), once the write lock is released.
func walHook(tls *libc.TLS, arg, conn, _ uintptr, frames int32) int32 {
	if v, ok := walHooks.Load(arg); ok {
		k := v.(*checkpointer)
		switch k.committed(int64(frames)) {
		case copyTail:
			k.catchUp(tls, conn)
		case copyBeforeNext:
			k.due = true
			k.overdue.Store(true)
		}
	}
	return sqlite3.SQLITE_OK
}

// walHookPtr is walHook as a C function pointer (modernc.org/libc calls a
// function pointer through a pointer to a Go func value).
var walHookPtr = func() uintptr {
	f := walHook
	return *(*uintptr)(unsafe.Pointer(&struct {
		f func(*libc.TLS, uintptr, uintptr, uintptr, int32) int32
	}{f}))
}()

// install makes c (the writer) report its commits to k instead of
// checkpointing in them.
func (k *checkpointer) install(c *Conn) {
	sqlite3.Xsqlite3_wal_hook(c.tls, c.db, walHookPtr, k.id)
}

// What a commit leaves for the writer to copy itself (committed).
const (
	copyNone       = iota
	copyTail       // a pass's small tail, now (catchUp)
	copyBeforeNext // the WAL, before the next transaction (settle)
)

// committed records the WAL size after a commit of the writer and wakes
// the checkpointer at or past the threshold. It reports what the writer
// must copy itself: the tail a pass left (see below), or, when the WAL
// has not restarted since the checkpointer was woken and the writer has
// committed three quarters as much again as the WAL held then (or as the
// threshold, if more; or as much again as the largest commit since the
// restart, if that is more), the WAL before its next transaction.
//
// Between the pass that copies the bulk of the WAL and the restart, the
// writer keeps committing, and the WAL restarts only at a transaction
// that finds every frame copied. Each pass syncs both files, so a pass
// for every commit past the threshold (the checkpointer never quite
// catching up with a writer that syncs each commit) cost two syncs a
// commit. So a commit wakes the checkpointer only when no pass is in
// progress and the WAL has grown by a quarter of the threshold since the
// last pass of this WAL; and once a pass has left a tail of at most an
// eighth of the threshold, the commit copies it itself (once per WAL
// cycle), which lets the next transaction restart the WAL.
func (k *checkpointer) committed(frames int64) int {
	k.commits.Add(1)
	salt, known := k.walSalt()
	prev := k.frames.Swap(frames)
	if frames < prev || (known && k.saltKnown && salt != k.salt) {
		k.woke, k.tailed, k.big = 0, false, 0 // the WAL restarted
		k.salt, k.saltKnown = salt, known     // once: the next commit is of this WAL
		prev = 0
		k.holdBase.Store(0)
	}
	k.big = max(k.big, frames-prev)
	if frames < k.threshold || k.db.closed.Load() {
		return copyNone
	}
	if k.holding.Load() {
		// A run of commits is open (checkpoint_hold.go): no pass, no copy,
		// until the WAL passes its bound; the rule of 7/4 counts from the
		// WAL the run leaves.
		k.heldBack.Store(true)
		k.woke, k.salt, k.saltKnown = frames, salt, known
		if k.held(frames) {
			return copyNone
		}
		k.must = true
		return copyBeforeNext
	}
	if k.woke == 0 {
		k.woke, k.salt, k.saltKnown = frames, salt, known
	}
	copied := int64(0) // frames of this WAL the last pass left copied
	if e := k.last.Load(); e != nil && known && e.known && e.salt == salt {
		copied = e.copied
	}
	if k.passing.Load() {
		if frames-prev >= k.threshold {
			// A large commit during a pass: the pass that follows it (run's
			// loop) waits for the store to be idle too.
			k.wokeBig.Store(true)
		}
	} else {
		switch tail := frames - copied; {
		case k.due:
			// The next transaction copies the WAL itself (settle): a
			// pass woken now would only keep it waiting.
		case copied > 0 && tail <= k.threshold/8 && !k.tailed:
			k.tailed = true
			return copyTail
		case copied == 0 || tail >= k.threshold/4:
			k.wokeBig.Store(frames-prev >= k.threshold)
			k.passing.Store(true)
			k.wake()
		}
	}
	if bound := max(max(k.woke, k.threshold)*7/4, 2*k.big); frames >= bound {
		k.must = k.must || frames >= 2*bound
		return copyBeforeNext
	}
	return copyNone
}

// wake starts a pass (the caller has set passing): it starts the
// goroutine at the first, and kicks it.
func (k *checkpointer) wake() {
	if k.started.CompareAndSwap(false, true) {
		go k.run()
	}
	select {
	case k.kick <- struct{}{}:
	default: // a pass is due already
	}
}

// passEnd is what one pass left (checkpointer.last).
type passEnd struct {
	salt   [2]uint32
	known  bool
	copied int64
}

// walSalt returns the salt of the WAL (from the WAL-index header), which
// changes at every restart; known is false before the checkpointer has
// mapped the WAL index or while another process writes the header.
func (k *checkpointer) walSalt() (salt [2]uint32, known bool) {
	m := k.shm.Load()
	if m == nil {
		return salt, false
	}
	h, ok := m.header()
	return [2]uint32{h[8], h[9]}, ok
}

// catchUp waits for the pass in progress and copies the rest of the WAL
// on the writer's connection, as SQLite's automatic checkpoint would: the
// writer's next transaction can then restart the WAL. It runs in the WAL
// hook of the writer's connection conn.
func (k *checkpointer) catchUp(tls *libc.TLS, conn uintptr) {
	if !k.writerHasMu {
		k.mu.Lock()
		defer k.mu.Unlock()
	}
	k.stats.WriterPasses.Add(1)
	k.passive(tls, conn)
}

// settle runs before the writer c begins a transaction: after a commit
// that left the WAL past its bound (due), it copies the rest of the WAL
// on c, so that the transaction restarts the WAL. While a pass is in
// progress it does not wait for it: the transaction goes on, and the
// first after the pass copies what the pass left (the pass, seeing
// overdue, leaves it to that transaction rather than passing again). Only
// past twice the bound (must) does it wait for the pass, so that a pass
// slower than the writer's commits (a slow disk's syncs) still bounds the
// WAL. A pass copies about the threshold's worth of pages and syncs both
// files, several milliseconds, and lone commits back to back waited that
// long once a WAL cycle (about 25% of the time of 20,000 lone Puts under
// load). Like a pass, it first ends the read transactions idle readers
// hold on a snapshot before the last commit: one would keep the copy from
// reaching the end of the WAL, and then the WAL would not restart and
// every transaction after would copy again. The caller holds the writer.
func (k *checkpointer) settle(c *Conn) {
	if k == nil || !k.due {
		return
	}
	if !k.writerHasMu {
		if !k.mu.TryLock() {
			if !k.must {
				return // a pass in progress: the next transaction copies
			}
			k.stats.WriterWaits.Add(1)
			k.mu.Lock()
		}
		defer k.mu.Unlock()
	}
	k.due, k.must = false, false
	k.overdue.Store(false)
	k.dropStale()
	k.stats.WriterPasses.Add(1)
	k.passive(c.tls, c.db)
}

func (k *checkpointer) run() {
	defer close(k.done)
	for {
		select {
		case <-k.kick:
		case <-k.db.closing:
			return
		}
		for copied := int64(-1); ; {
			if !k.waitRun() || !k.foregroundIdle(k.wokeBig.Load()) {
				break // closing
			}
			k.pass()
			if f := k.afterPass.Load(); f != nil {
				(*f)()
			}
			// Commits made during the pass woke none (passing): copy them
			// now if they are a quarter of the threshold or more, rather
			// than at the next commit, which may be long in coming while
			// readers then look every page up in the WAL first. A pass
			// that copied nothing more (readers in the way) ends it.
			// The writer's next transaction copies the rest itself once
			// the WAL is past its bound (settle): passing again would
			// keep it waiting for this goroutine.
			e := k.last.Load()
			if e == nil || e.copied <= copied || !k.behind(e) || k.db.closed.Load() || k.overdue.Load() {
				break
			}
			copied = e.copied
		}
		k.passing.Store(false)
	}
}

// idleWait bounds how long a pass waits for the store to be idle
// (foregroundIdle), and idleGap is how long the store must stay idle.
const (
	idleWait = 500 * time.Millisecond
	idleGap  = 5 * time.Millisecond
)

// foregroundIdle waits, after a large commit (big: one that wrote the
// threshold's worth of frames on its own), for a moment when the store is
// idle: no write transaction in progress, no commit and no read begun
// during idleGap, and no read in progress then; it reports false if the
// DB is closing. A pass copies each page once whatever the number of
// commits that rewrote it, and syncs both files once: one after a burst
// of large transactions (10,000 random updates, then 5,000 random deletes
// on a 1M-key store) copies far fewer pages than one per commit, and no
// longer runs beside the transaction that follows a large commit. Nor
// beside the reads that follow: a pass run during a stream of reads adds
// its CPU (about 36 ms for 8,000 pages, two thirds of it the two syncs)
// to theirs, and on one CPU takes it from them (50,000 existence checks
// after those deletes ran at 0.58x SNKV C's rate on one core, 0.66-0.75x
// on two, with the pass among them).
//
// A store that is never idle still has its WAL copied, late by a bounded
// delay:
//
//   - writes: with more than one CPU, a write transaction that begins
//     or commits during the wait is waited for, and then the pass runs
//     after idleGap without a read, whatever the writer does meanwhile,
//     so that large commits back to back still have their WAL copied in
//     the background, one transaction late (a read in that gap starts
//     the wait over: the writer did pause, for the reads);
//   - the WAL's size: once a commit leaves the WAL past its bound, so
//     that the writer's next transaction would copy it itself (settle),
//     the pass runs at once;
//   - time: reads that never pause (a server answering a steady stream of
//     requests) hold the pass off for idleWait at most.
//
// After small commits on more than one CPU it does not wait (a stream of
// small commits gains nothing from it, and the WAL grew past its bound
// while the pass waited); commits meanwhile keep the WAL bounded as ever
// (see settle). On one CPU (GOMAXPROCS 1: a process confined to one core,
// a small container) every pass waits so, and a write transaction does
// not end the wait early.
func (k *checkpointer) foregroundIdle(big bool) bool {
	one := runtime.GOMAXPROCS(0) == 1
	if !one && !big {
		return true
	}
	k.watching.Store(true)
	defer k.watching.Store(false)
	wait := idleWait
	if w := k.idleWaitTest.Load(); w > 0 {
		wait = time.Duration(w)
	}
	deadline := time.Now().Add(wait)
	waited := false // a write transaction ran during a gap, with no read since
	for {
		select {
		case c := <-k.db.writer:
			k.db.writer <- c
		case <-k.db.closing:
			return false
		}
		if k.overdue.Load() {
			return true
		}
		if time.Now().After(deadline) {
			k.idleTimeouts.Add(1)
			return true
		}
		n, w := k.reads.Load(), k.commits.Load()
		t := time.NewTimer(idleGap)
		select {
		case <-t.C:
		case <-k.db.closing:
			t.Stop()
			return false
		}
		if k.reads.Load() != n || !k.db.readersIdle() {
			waited = false // reads: not a writer that never pauses
			continue
		}
		if waited && !one {
			return true // a gap without reads after a write transaction
		}
		if k.commits.Load() == w {
			select {
			case c := <-k.db.writer:
				k.db.writer <- c
				return true
			default: // a write transaction began: wait for it
			}
		}
		waited = true
	}
}

// readersIdle reports whether every open reader is back in the pool.
func (db *DB) readersIdle() bool {
	db.mu.Lock()
	open := db.nOpen
	db.mu.Unlock()
	return len(db.readers) >= open
}

// noteRead counts a read that begins while the checkpointer waits for the
// store to be idle (foregroundIdle).
func (k *checkpointer) noteRead() {
	if k != nil && k.watching.Load() {
		k.reads.Add(1)
	}
}

// behind reports whether the WAL the last pass (e) left holds a quarter of
// the threshold or more past what it copied.
func (k *checkpointer) behind(e *passEnd) bool {
	salt, known := k.walSalt()
	return known && e.known && e.salt == salt && k.frames.Load()-e.copied >= k.threshold/4
}

// pass runs one checkpoint. Idle readers holding a transaction that a
// commit has made stale go first: it would keep the pass from copying past
// its snapshot, and their next read cannot reuse it anyway (snapshot.go).
func (k *checkpointer) pass() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.dropStale()
	k.checkpoint()
}

// dropStale ends the read transactions that idle readers hold on a
// snapshot older than the last commit (see pass).
func (k *checkpointer) dropStale() {
	if m := k.shm.Load(); m != nil {
		if h, ok := m.header(); ok {
			k.db.dropHeld(func(c *Conn) bool { return c.hold.hdr != h })
		}
	}
}

// checkpoint runs one PASSIVE checkpoint on the checkpointer's
// connection, opening it first if need be. k.mu is held.
func (k *checkpointer) checkpoint() {
	if k.db.closed.Load() {
		return
	}
	if k.conn == nil {
		c, err := k.db.openCheckpointConn()
		if err != nil {
			k.stats.Errors.Add(1)
			return
		}
		k.connMu.Lock()
		k.conn = c
		k.connMu.Unlock()
		if m, err := mapShm(c); err == nil {
			k.shm.Store(m)
		}
	}
	k.passive(k.conn.tls, k.conn.db)
}

// passive runs a PASSIVE checkpoint on connection conn (a sqlite3*) and
// counts it; a pass that copied the whole WAL it saw moves gen on. k.mu is
// held.
func (k *checkpointer) passive(tls *libc.TLS, conn uintptr) {
	k.stats.Passes.Add(1)
	salt, known := k.walSalt() // before the pass: see committed
	p := sqlite3.Xsqlite3_malloc64(tls, 8)
	if p == 0 {
		k.stats.Errors.Add(1)
		return
	}
	defer sqlite3.Xsqlite3_free(tls, p)
	out := (*[2]int32)(cptr(p)) // the WAL's frames, and those in the database file
	out[0], out[1] = -1, -1
	rc := sqlite3.Xsqlite3_wal_checkpoint_v2(tls, conn, 0, sqlite3.SQLITE_CHECKPOINT_PASSIVE, p, p+4)
	switch {
	case rc != sqlite3.SQLITE_OK || out[0] < 0:
		k.stats.Errors.Add(1)
		return
	case out[1] == out[0]:
		k.gen.Add(1)
		gen := k.db.checkpointGen()
		// Idle readers holding a transaction begun before this pass keep
		// the writer from restarting the WAL at its next transaction, and
		// the WAL then grows until a commit must copy it all (settle).
		// Their next read would end it anyway (their snapshot's gen is
		// older): end it now.
		k.db.dropHeld(func(c *Conn) bool { return c.hold.gen != gen })
		k.stats.Complete.Add(1)
	}
	k.last.Store(&passEnd{salt: salt, known: known, copied: int64(out[1])})
}

// interrupt stops a pass in progress; Close calls it once db.closing is
// closed, so that it does not wait for a pass that holds the writer.
func (k *checkpointer) interrupt() {
	if k == nil {
		return
	}
	k.connMu.Lock()
	defer k.connMu.Unlock()
	if k.conn != nil {
		k.conn.interrupt()
	}
}

// stop ends the goroutine, interrupting a pass in progress, and closes the
// connection (without the checkpoint SQLite runs when the last connection
// to a file closes, if noCheckpoint). Close and Discard call it once
// db.closing is closed, holding the writer, so that no commit can start
// the goroutine meanwhile.
func (k *checkpointer) stop(noCheckpoint bool) {
	if k == nil {
		return
	}
	walHooks.Delete(k.id)
	if k.started.Load() {
		k.interrupt()
		<-k.done
	}
	k.shm.Store(nil) // SQLite's mapping, gone with the connection
	k.connMu.Lock()
	defer k.connMu.Unlock()
	if k.conn != nil {
		if noCheckpoint {
			k.conn.noCheckpointOnClose()
		}
		_ = k.conn.close()
		k.conn = nil
	}
}

// openCheckpointConn opens the checkpointer's connection. It never waits
// for locks (a PASSIVE checkpoint does not), and it never loads the schema
// (each connection that does keeps a copy of it: about 26 KiB per column
// family). A checkpoint syncs the WAL before copying and the database file
// after at any synchronous level but OFF, so only OFF is set (with a
// PRAGMA, which loads the schema); a new connection's level is FULL.
func (db *DB) openCheckpointConn() (*Conn, error) {
	c, err := db.openSame(func() (*Conn, error) { return openConn(db.dsn) })
	if err != nil {
		return nil, err
	}
	c.setBusyTimeout(0)
	// Reading the header opens the WAL, without the schema.
	pragmas := []string{"PRAGMA schema_version"}
	if db.cfg.Sync == "OFF" {
		pragmas = append(pragmas, "PRAGMA synchronous = OFF")
	}
	for _, p := range pragmas {
		if err := c.ExecScript(context.Background(), p); err != nil {
			_ = c.close()
			return nil, err
		}
	}
	return c, nil
}

// CheckpointStats returns the counters of the DB's automatic checkpoints;
// nil when it has no checkpointer (see checkpoint.go).
func (db *DB) CheckpointStats() *CheckpointStats {
	if db.ckpt == nil {
		return nil
	}
	return &db.ckpt.stats
}

// waitCheckpoint waits for a pass in progress to end and keeps passes from
// starting until the returned function is called. The caller holds the
// writer.
func (db *DB) waitCheckpoint() func() {
	if db.ckpt == nil {
		return func() {}
	}
	k := db.ckpt
	k.mu.Lock()
	k.writerHasMu = true
	return func() {
		k.writerHasMu = false
		k.mu.Unlock()
	}
}

// checkpointGen is the number of passes that copied the whole WAL (none
// for a DB without a checkpointer) plus the number of RetireHeld calls: a
// held read transaction begun under another generation is not reused.
func (db *DB) checkpointGen() uint64 {
	g := db.retired.Load()
	if db.ckpt != nil {
		g += db.ckpt.gen.Load()
	}
	return g
}

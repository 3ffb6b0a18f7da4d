package engine

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/snkv-go/snkv/internal/btree"
	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// maxCachedStmts bounds each connection's statement cache. Column families
// contribute a handful of statements each; past this many the cache is
// emptied and refilled on demand.
const maxCachedStmts = 512

// Connections call SQLite (modernc.org/sqlite/lib, the library behind the
// modernc.org/sqlite driver) directly. The pool hands a connection to one
// goroutine at a time, so it is opened without SQLite's per-connection mutex
// (SQLITE_OPEN_NOMUTEX): through the database/sql driver, which opens every
// connection SQLITE_OPEN_FULLMUTEX, that mutex is taken and released on every
// call (step, and three calls per column read), which was half the CPU
// time of a scan (docs/benchmarks.md). SQLite's global mutexes stay on, so
// connections on different goroutines remain safe.
const openFlags = sqlite3.SQLITE_OPEN_READWRITE | sqlite3.SQLITE_OPEN_CREATE |
	sqlite3.SQLITE_OPEN_NOMUTEX | sqlite3.SQLITE_OPEN_URI

// cptr turns an address in SQLite's memory (allocated by modernc.org/libc,
// outside the Go heap) into a pointer.
func cptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// Error is an error reported by SQLite, with its extended result code.
type Error struct {
	code int
	msg  string
}

// Error returns SQLite's message.
func (e *Error) Error() string { return e.msg }

// Code returns the extended SQLite result code.
func (e *Error) Code() int { return e.code }

// Conn is one SQLite connection with its prepared-statement cache. A Conn is
// used by one goroutine at a time: the pool hands it out exclusively.
type Conn struct {
	tls   *libc.TLS
	db    uintptr    // sqlite3*
	mu    sync.Mutex // orders an interrupt from a context against close
	stmts map[string]*cstmt
	buf   uintptr // SQLite-allocated scratch for bound blobs and texts
	bufN  int
	broke bool // a statement failed in a way that leaves the connection unusable
	hold  holdState
	fast  *btree.Conn // writes below the SQL layer (fast.go)
	// aborted is set when a fast-path write failed part way and rolled the
	// transaction back; Begin clears it.
	aborted error
	// The writer's spill size: SQLite's (spillBase) and the one a
	// transaction of more than BigTxRows fast writes gets (spillBig, 0:
	// none), whether it is raised now, and the rows written below SQL in
	// the current transaction.
	spillBase, spillBig int64
	spillRaised         bool
	txRows              int
	goScratch           []byte // see Scratch
	// point is the Rows of a point read answered below SQL, reused from
	// one read to the next while pointBusy is unset (QueryPoint).
	point     Rows
	pointBusy bool
	// one is the Rows of a one-row query (queryOne), reused while
	// oneBusy is unset.
	one      Rows
	oneBusy  bool
	pointBuf []byte // the bytes of the point rows (ownRow)
	// cacheGen is the checkpointer's count of full copies when this
	// reader last began a read transaction (DB.dropWALPages).
	cacheGen uint64
}

// Scratch returns an empty buffer of capacity at least n, owned by the
// connection and reused by its next call: for bytes built only to be
// written on c (a sealed value), which every write copies before it
// returns.
func (c *Conn) Scratch(n int) []byte {
	if cap(c.goScratch) < n {
		c.goScratch = make([]byte, 0, n)
	}
	return c.goScratch[:0]
}

func openConn(dsn string) (*Conn, error) {
	tls := libc.NewTLS()
	c := &Conn{tls: tls, stmts: make(map[string]*cstmt)}
	name, err := c.cString(dsn)
	if err != nil {
		tls.Close()
		return nil, err
	}
	pp := sqlite3.Xsqlite3_malloc64(tls, uint64(unsafe.Sizeof(uintptr(0))))
	if pp == 0 {
		sqlite3.Xsqlite3_free(tls, name)
		tls.Close()
		return nil, errNoMem
	}
	*(*uintptr)(cptr(pp)) = 0
	rc := sqlite3.Xsqlite3_open_v2(tls, name, pp, openFlags, 0)
	c.db = *(*uintptr)(cptr(pp))
	sqlite3.Xsqlite3_free(tls, pp)
	sqlite3.Xsqlite3_free(tls, name)
	if rc != sqlite3.SQLITE_OK {
		err := c.errFor(rc)
		if c.db != 0 {
			sqlite3.Xsqlite3_close_v2(tls, c.db)
		}
		tls.Close()
		return nil, err
	}
	sqlite3.Xsqlite3_extended_result_codes(tls, c.db, 1)
	if btree.Enabled && btree.Compatible() == nil {
		c.fast = btree.New(tls, c.db)
	}
	return c, nil
}

var errNoMem = &Error{code: sqlite3.SQLITE_NOMEM, msg: "snkv: out of memory (SQLITE_NOMEM)"}

func (c *Conn) close() error {
	if c.fast != nil {
		c.fast.Close()
		c.fast = nil
	}
	for q, s := range c.stmts {
		sqlite3.Xsqlite3_finalize(c.tls, s.p)
		delete(c.stmts, q)
	}
	c.mu.Lock()
	rc := sqlite3.Xsqlite3_close_v2(c.tls, c.db)
	var err error
	if rc != sqlite3.SQLITE_OK {
		err = c.errFor(rc)
	}
	c.db = 0
	c.mu.Unlock()
	if c.buf != 0 {
		sqlite3.Xsqlite3_free(c.tls, c.buf)
		c.buf, c.bufN = 0, 0
	}
	c.tls.Close()
	return err
}

// errFor builds the error of result code rc from the connection's message.
func (c *Conn) errFor(rc int32) error {
	str := libc.GoString(sqlite3.Xsqlite3_errstr(c.tls, rc))
	if c.db != 0 {
		if msg := libc.GoString(sqlite3.Xsqlite3_errmsg(c.tls, c.db)); msg != "" && msg != str {
			return &Error{code: int(rc), msg: fmt.Sprintf("%s: %s (%d)", str, msg, rc)}
		}
	}
	return &Error{code: int(rc), msg: fmt.Sprintf("%s (%d)", str, rc)}
}

// maxScratch is the largest bound value copied through the connection's
// reusable buffer; larger ones get a buffer of their own for the call, so
// that a connection never keeps a huge buffer.
const maxScratch = 64 << 10

// scratch returns SQLite-allocated memory of at least n bytes (and at least
// one), valid until the next call.
func (c *Conn) scratch(n int) (uintptr, error) {
	if n < 1 {
		n = 1
	}
	if n > c.bufN {
		size := max(n, 2*c.bufN, 256)
		p := sqlite3.Xsqlite3_realloc64(c.tls, c.buf, uint64(size))
		if p == 0 {
			return 0, errNoMem
		}
		c.buf, c.bufN = p, size
	}
	return c.buf, nil
}

// cString copies s into SQLite-allocated memory with a terminating NUL; the
// caller frees it with sqlite3_free.
func (c *Conn) cString(s string) (uintptr, error) {
	p := sqlite3.Xsqlite3_malloc64(c.tls, uint64(len(s)+1))
	if p == 0 {
		return 0, errNoMem
	}
	b := unsafe.Slice((*byte)(cptr(p)), len(s)+1)
	copy(b, s)
	b[len(s)] = 0
	return p, nil
}

// setBusyTimeout sets how long SQLite waits for a lock held by another
// connection (the PRAGMA busy_timeout, without parsing one).
func (c *Conn) setBusyTimeout(d time.Duration) {
	sqlite3.Xsqlite3_busy_timeout(c.tls, c.db, int32(d.Milliseconds()))
}

// MarkBroken tells the pool not to reuse c: it could not end a transaction.
func (c *Conn) MarkBroken() { c.broke = true }

// Quote returns name as a double-quoted SQL identifier. Every table name
// snkv puts into SQL text goes through it; user data is always bound.
func Quote(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

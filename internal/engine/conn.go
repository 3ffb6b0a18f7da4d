package engine

import (
	"context"
	"database/sql/driver"
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

// cstmt is a prepared statement.
type cstmt struct {
	p    uintptr // sqlite3_stmt*
	busy bool    // open Rows are reading it
	big  bool    // holds a bound value larger than maxScratch
	// fresh is set until the statement's first run: compiled against the
	// schema as it is now, which Rows.SchemaChanged reports.
	fresh bool
}

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

// prepareNew compiles query into a statement that is not cached.
func (c *Conn) prepareNew(query string) (*cstmt, error) {
	z, err := c.cString(query)
	if err != nil {
		return nil, err
	}
	defer sqlite3.Xsqlite3_free(c.tls, z)
	pp, err := c.scratch(int(unsafe.Sizeof(uintptr(0))))
	if err != nil {
		return nil, err
	}
	*(*uintptr)(cptr(pp)) = 0
	rc := sqlite3.Xsqlite3_prepare_v3(c.tls, c.db, z, -1, sqlite3.SQLITE_PREPARE_PERSISTENT, pp, 0)
	for try := 0; rc == sqlite3.SQLITE_SCHEMA && try < schemaRetries; try++ {
		rc = sqlite3.Xsqlite3_prepare_v3(c.tls, c.db, z, -1, sqlite3.SQLITE_PREPARE_PERSISTENT, pp, 0)
	}
	if rc != sqlite3.SQLITE_OK {
		return nil, c.errFor(rc)
	}
	p := *(*uintptr)(cptr(pp))
	if p == 0 {
		return nil, fmt.Errorf("snkv: no SQL statement in %q", query)
	}
	return &cstmt{p: p, fresh: true}, nil
}

func (c *Conn) prepare(query string) (*cstmt, error) {
	if s, ok := c.stmts[query]; ok {
		return s, nil
	}
	if len(c.stmts) >= maxCachedStmts {
		busy := false
		for _, s := range c.stmts {
			busy = busy || s.busy
		}
		if !busy {
			for q, s := range c.stmts {
				sqlite3.Xsqlite3_finalize(c.tls, s.p)
				delete(c.stmts, q)
			}
		}
	}
	s, err := c.prepareNew(query)
	if err != nil {
		return nil, err
	}
	c.stmts[query] = s
	return s, nil
}

// bind binds args to the statement's parameters ?1, ?2, ... in order.
// Arguments past the statement's last parameter are ignored (scans pass both
// bounds to statements that use one or none). SQLite copies every value, so
// no Go memory is referenced after bind returns.
func (c *Conn) bind(s *cstmt, args []any) error {
	n := int(sqlite3.Xsqlite3_bind_parameter_count(c.tls, s.p))
	if len(args) < n {
		return fmt.Errorf("snkv: statement has %d parameters, got %d arguments", n, len(args))
	}
	for i := 1; i <= n; i++ {
		var rc int32
		switch v := args[i-1].(type) {
		case nil:
			rc = sqlite3.Xsqlite3_bind_null(c.tls, s.p, int32(i))
		case []byte:
			if v == nil {
				rc = sqlite3.Xsqlite3_bind_null(c.tls, s.p, int32(i))
				break
			}
			rc = c.bindBytes(s, i, v, false)
		case string:
			rc = c.bindBytes(s, i, unsafe.Slice(unsafe.StringData(v), len(v)), true)
		case int64:
			rc = sqlite3.Xsqlite3_bind_int64(c.tls, s.p, int32(i), v)
		case int:
			rc = sqlite3.Xsqlite3_bind_int64(c.tls, s.p, int32(i), int64(v))
		case bool:
			b := int64(0)
			if v {
				b = 1
			}
			rc = sqlite3.Xsqlite3_bind_int64(c.tls, s.p, int32(i), b)
		case float64:
			rc = sqlite3.Xsqlite3_bind_double(c.tls, s.p, int32(i), v)
		default:
			return fmt.Errorf("snkv: cannot bind argument %d of type %T", i, v)
		}
		if rc != sqlite3.SQLITE_OK {
			return c.errFor(rc)
		}
	}
	return nil
}

// bindBytes binds b (read only) as a blob, or a text when text is set. The
// bytes are copied to SQLite's memory first: Go memory may move (a
// goroutine's stack does when it grows) while SQLite reads it.
func (c *Conn) bindBytes(s *cstmt, i int, b []byte, text bool) int32 {
	var p uintptr
	if len(b) <= maxScratch {
		var err error
		if p, err = c.scratch(len(b)); err != nil {
			return sqlite3.SQLITE_NOMEM
		}
	} else {
		if p = sqlite3.Xsqlite3_malloc64(c.tls, uint64(len(b))); p == 0 {
			return sqlite3.SQLITE_NOMEM
		}
		defer sqlite3.Xsqlite3_free(c.tls, p)
		s.big = true
	}
	copy(unsafe.Slice((*byte)(cptr(p)), len(b)), b)
	if text {
		return sqlite3.Xsqlite3_bind_text(c.tls, s.p, int32(i), p, int32(len(b)), sqlite3.SQLITE_TRANSIENT)
	}
	return sqlite3.Xsqlite3_bind_blob(c.tls, s.p, int32(i), p, int32(len(b)), sqlite3.SQLITE_TRANSIENT)
}

// step runs the statement to its next row: it reports true on a row, false
// when done.
func (c *Conn) step(s *cstmt) (bool, error) {
	rc := sqlite3.Xsqlite3_step(c.tls, s.p)
	for try := 0; rc == sqlite3.SQLITE_SCHEMA && try < schemaRetries; try++ {
		rc = c.restep(s) // see schemaRetries
	}
	switch rc {
	case sqlite3.SQLITE_ROW:
		return true, nil
	case sqlite3.SQLITE_DONE:
		return false, nil
	default:
		return false, c.errFor(rc)
	}
}

func (c *Conn) reset(s *cstmt) { sqlite3.Xsqlite3_reset(c.tls, s.p) }

// release resets the statement. SQLite keeps a copy of each bound value
// until the statement is bound again; a large one is freed now. (Not
// always: sqlite3_clear_bindings makes SQLite compile the statement again
// on its next run when its plan used a parameter's value, as the join of a
// column family's read view with its key index does.)
func (c *Conn) release(s *cstmt) {
	sqlite3.Xsqlite3_reset(c.tls, s.p)
	if s.big {
		sqlite3.Xsqlite3_clear_bindings(c.tls, s.p)
		s.big = false
	}
}

// interrupt stops the statement running on c, from any goroutine.
func (c *Conn) interrupt() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.db != 0 {
		// A TLS of its own: the connection's is in use by the statement.
		tls := libc.NewTLS()
		sqlite3.Xsqlite3_interrupt(tls, c.db)
		tls.Close()
	}
}

// watch arranges for the running statement to be interrupted when ctx ends.
// It returns nil for a context that never ends, else a function that ends
// the watch and returns only once no interrupt is in flight. An error means
// ctx has ended already.
func (c *Conn) watch(ctx context.Context) (func(), error) {
	if ctx == nil || ctx.Done() == nil {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.interrupt()
		close(fired)
	})
	return func() {
		if !stop() {
			<-fired
		}
	}, nil
}

// ctxErr turns an interrupted statement's error into the context's error.
func ctxErr(ctx context.Context, err error) error {
	if err != nil && ctx != nil && ctx.Err() != nil && Code(err) == codeInterrupt {
		return ctx.Err()
	}
	return err
}

// Exec runs a cached statement that returns no rows (any it returns are
// skipped) and reports how many rows it changed.
func (c *Conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	c.releaseFast()
	s, err := c.prepare(query)
	if err != nil {
		return 0, err
	}
	if s.busy {
		// A nested use of a statement whose Rows are open.
		if s, err = c.prepareNew(query); err != nil {
			return 0, err
		}
		defer sqlite3.Xsqlite3_finalize(c.tls, s.p)
	}
	if err := c.bind(s, args); err != nil {
		c.release(s)
		return 0, err
	}
	stop, err := c.watch(ctx)
	if err != nil {
		c.release(s)
		return 0, err
	}
	for {
		var row bool
		if row, err = c.step(s); !row || err != nil {
			break
		}
	}
	c.release(s)
	if stop != nil {
		stop()
	}
	if err != nil {
		return 0, ctxErr(ctx, err)
	}
	return sqlite3.Xsqlite3_changes64(c.tls, c.db), nil
}

// ExecScript runs SQL that is not cached (DDL, PRAGMAs, BEGIN/COMMIT); it
// may hold several statements.
func (c *Conn) ExecScript(ctx context.Context, query string) error {
	c.releaseFast()
	z, err := c.cString(query)
	if err != nil {
		return err
	}
	defer sqlite3.Xsqlite3_free(c.tls, z)
	stop, err := c.watch(ctx)
	if err != nil {
		return err
	}
	rc := sqlite3.Xsqlite3_exec(c.tls, c.db, z, 0, 0, 0)
	if stop != nil {
		stop()
	}
	if rc != sqlite3.SQLITE_OK {
		return ctxErr(ctx, c.errFor(rc))
	}
	return nil
}

// Control runs a transaction-control statement (BEGIN, COMMIT, ROLLBACK)
// through the statement cache: they run for every transaction, and parsing
// them anew each time costs more than running them.
func (c *Conn) Control(ctx context.Context, stmt string) error {
	_, err := c.Exec(ctx, stmt)
	return err
}

// Query runs a cached statement. The Rows must be closed; until then the
// cached statement is taken, and a second Query of the same SQL on this
// connection (a nested iteration) runs on a statement of its own.
func (c *Conn) Query(ctx context.Context, query string, args ...any) (*Rows, error) {
	c.releaseFast()
	s, err := c.prepare(query)
	if err != nil {
		return nil, err
	}
	own := s.busy
	if own {
		if s, err = c.prepareNew(query); err != nil {
			return nil, err
		}
	}
	if err := c.bind(s, args); err != nil {
		c.release(s)
		if own {
			sqlite3.Xsqlite3_finalize(c.tls, s.p)
		}
		return nil, err
	}
	stop, err := c.watch(ctx)
	if err != nil {
		c.release(s)
		if own {
			sqlite3.Xsqlite3_finalize(c.tls, s.p)
		}
		return nil, err
	}
	// The first step runs now, so that a statement that fails at once (a
	// table dropped by another process, a busy database) fails here.
	reps := sqlite3.Xsqlite3_stmt_status(c.tls, s.p, sqlite3.SQLITE_STMTSTATUS_REPREPARE, 0)
	row, err := c.step(s)
	changed := s.fresh || sqlite3.Xsqlite3_stmt_status(c.tls, s.p, sqlite3.SQLITE_STMTSTATUS_REPREPARE, 0) != reps
	s.fresh = false
	if err != nil {
		c.release(s)
		if stop != nil {
			stop()
		}
		if own {
			sqlite3.Xsqlite3_finalize(c.tls, s.p)
		}
		return nil, ctxErr(ctx, err)
	}
	s.busy = true
	r := &Rows{conn: c, s: s, own: own, ctx: ctx, stop: stop, ahead: row, done: !row, changed: changed}
	if !row {
		c.reset(s) // release the read lock now rather than at Close
	}
	return r, nil
}

// QueryRow runs a cached query and copies its first row into dest (blobs as
// []byte, texts as string, integers as int64, reals as float64, NULL as
// nil). It returns ErrNotFound (unwrapped) when there is no row.
func (c *Conn) QueryRow(ctx context.Context, query string, dest []driver.Value, args ...any) error {
	rows, err := c.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	if !rows.Next() {
		err = rows.Err()
		_ = rows.Close()
		if err == nil {
			err = ErrNotFound
		}
		return err
	}
	for i := range dest {
		dest[i] = rows.value(i)
	}
	return rows.Close()
}

// Rows streams the result of a Query. Column accessors read the current row
// and are valid until the next call of Next or Close.
type Rows struct {
	conn  *Conn
	s     *cstmt
	own   bool // s is not cached: finalize it with the rows
	ctx   context.Context
	stop  func() // ends the context watch
	err   error
	ahead bool // Query stepped onto the first row: Next only reports it
	done  bool // the statement ran to its end or failed: never step again
	// changed: the statement was compiled for this run (first use on the
	// connection, or SQLite recompiled it after a schema change).
	changed bool
	// fast, when set, yields the rows instead of the statement, which only
	// holds the transaction open (QueryScan); cols maps each column of the
	// statement to a field of the table's record (-1: NULL).
	fast *btree.Scan
	cols []int
}

// SchemaChanged reports whether the query was compiled for this run: its
// first use on the connection, or a recompilation because the schema
// changed since its last run (a table dropped and created again by another
// connection or process). Callers that cache facts about the schema check
// them again when it is true.
func (r *Rows) SchemaChanged() bool { return r.changed }

// Next advances to the next row; it returns false at the end or on error
// (see Err).
func (r *Rows) Next() bool {
	if r.fast != nil {
		return r.nextFast()
	}
	if r.ahead {
		r.ahead = false
		return true
	}
	if r.done || r.s == nil {
		return false
	}
	row, err := r.conn.step(r.s)
	if row {
		return true
	}
	r.done = true
	r.err = ctxErr(r.ctx, err)
	// Release the statement's read lock now rather than at Close.
	r.conn.reset(r.s)
	return false
}

func (r *Rows) colType(i int) int32 {
	if r.fast != nil {
		return int32(r.field(i).Kind)
	}
	return sqlite3.Xsqlite3_column_type(r.conn.tls, r.s.p, int32(i))
}

// raw returns column i of the current row, a blob or a text, as bytes in
// SQLite's memory; nil for NULL or a number.
func (r *Rows) raw(i int) []byte {
	if r.fast != nil {
		return r.fieldBytes(i)
	}
	c := r.conn
	var p uintptr
	switch r.colType(i) {
	case sqlite3.SQLITE_BLOB:
		p = sqlite3.Xsqlite3_column_blob(c.tls, r.s.p, int32(i))
	case sqlite3.SQLITE_TEXT:
		p = sqlite3.Xsqlite3_column_text(c.tls, r.s.p, int32(i))
	default:
		return nil
	}
	n := sqlite3.Xsqlite3_column_bytes(c.tls, r.s.p, int32(i))
	if p == 0 || n == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(cptr(p)), n)
}

// Bytes returns column i of the current row, a blob or a text, as a fresh
// slice the caller owns; an empty one is empty and non-nil. NULL or a number
// gives nil.
func (r *Rows) Bytes(i int) []byte {
	b := r.raw(i)
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// Blob returns column i of the current row as bytes in SQLite's memory,
// valid only until the next Next or Close, in two calls into SQLite rather
// than RawBytes's three: a text is returned as its bytes, a number as its
// text, and NULL or an empty value as an empty, non-nil slice. For columns
// that hold blobs (keys and values) on the hot path of scans.
func (r *Rows) Blob(i int) []byte {
	if r.fast != nil {
		if b := r.fieldBytes(i); len(b) > 0 {
			return b
		}
		return []byte{}
	}
	c := r.conn
	p := sqlite3.Xsqlite3_column_blob(c.tls, r.s.p, int32(i))
	n := sqlite3.Xsqlite3_column_bytes(c.tls, r.s.p, int32(i))
	if p == 0 || n == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(cptr(p)), n)
}

// RawBytes is Bytes without the copy: the slice points into SQLite's memory
// and is valid only until the next Next or Close. Never keep it or hand it
// to a caller.
func (r *Rows) RawBytes(i int) []byte { return r.raw(i) }

// Int returns column i of the current row as an int64 (0 for NULL).
func (r *Rows) Int(i int) int64 {
	if r.fast != nil {
		return r.field(i).Int
	}
	return sqlite3.Xsqlite3_column_int64(r.conn.tls, r.s.p, int32(i))
}

// value returns column i as the driver would: []byte, string, int64,
// float64 or nil.
func (r *Rows) value(i int) driver.Value {
	switch r.colType(i) {
	case sqlite3.SQLITE_NULL:
		return nil
	case sqlite3.SQLITE_INTEGER:
		return r.Int(i)
	case sqlite3.SQLITE_FLOAT:
		return sqlite3.Xsqlite3_column_double(r.conn.tls, r.s.p, int32(i))
	case sqlite3.SQLITE_TEXT:
		return string(r.raw(i))
	}
	return r.Bytes(i)
}

// Err reports the error that stopped Next, if any.
func (r *Rows) Err() error { return r.err }

// Close releases the statement for reuse. It returns the error that
// stopped Next, if any, as Err does.
func (r *Rows) Close() error {
	if r.fast != nil {
		r.fast.Close()
		r.fast = nil
	}
	if r.s == nil {
		return r.err
	}
	c := r.conn
	c.release(r.s)
	if r.own {
		sqlite3.Xsqlite3_finalize(c.tls, r.s.p)
	} else {
		r.s.busy = false
	}
	r.s = nil
	r.ahead = false
	if r.stop != nil {
		r.stop()
		r.stop = nil
	}
	return r.err
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

// Storage classes of a column value, as Rows.Kind reports them.
const (
	KindInt   = sqlite3.SQLITE_INTEGER
	KindFloat = sqlite3.SQLITE_FLOAT
	KindText  = sqlite3.SQLITE_TEXT
	KindBlob  = sqlite3.SQLITE_BLOB
	KindNull  = sqlite3.SQLITE_NULL
)

// Kind returns the storage class of column i of the current row (KindBlob,
// KindNull, …), so that a reader can refuse a cell of the wrong type rather
// than read it as something else.
func (r *Rows) Kind(i int) int { return int(r.colType(i)) }

// RawBlob is RawBytes for a column that must be a BLOB, with one look-up
// of the column: it returns the bytes (in SQLite's memory, valid until the
// next Next or Close) and the storage class; for any class but KindBlob the
// bytes are nil. The column is found once (sqlite3_column_value) and its
// type, bytes and length read from that value, rather than three
// sqlite3_column_* calls that each find it again: it is on the per-row path
// of every scan and Get. The value is unprotected in SQLite's terms, which
// only matters to a connection shared by threads; a Conn is used by one
// goroutine at a time.
func (r *Rows) RawBlob(i int) ([]byte, int) {
	if r.fast != nil {
		f := r.field(i)
		if f.Kind != KindBlob {
			return nil, f.Kind
		}
		if f.Bytes == nil {
			return []byte{}, f.Kind
		}
		return f.Bytes, f.Kind
	}
	c := r.conn
	v := sqlite3.Xsqlite3_column_value(c.tls, r.s.p, int32(i))
	k := sqlite3.Xsqlite3_value_type(c.tls, v)
	if k != sqlite3.SQLITE_BLOB {
		return nil, int(k)
	}
	p := sqlite3.Xsqlite3_value_blob(c.tls, v)
	n := sqlite3.Xsqlite3_value_bytes(c.tls, v)
	if p == 0 || n == 0 {
		return []byte{}, int(k)
	}
	return unsafe.Slice((*byte)(cptr(p)), n), int(k)
}

// IntKind returns column i of the current row as Int does (0 for NULL) and
// its storage class as Kind does, with one look-up of the column (see
// RawBlob).
func (r *Rows) IntKind(i int) (int64, int) {
	if r.fast != nil {
		f := r.field(i)
		return f.Int, f.Kind
	}
	c := r.conn
	v := sqlite3.Xsqlite3_column_value(c.tls, r.s.p, int32(i))
	k := sqlite3.Xsqlite3_value_type(c.tls, v)
	return sqlite3.Xsqlite3_value_int64(c.tls, v), int(k)
}

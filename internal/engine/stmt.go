package engine

import (
	"context"
	"database/sql/driver"
	"fmt"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// cstmt is a prepared statement.
type cstmt struct {
	p    uintptr // sqlite3_stmt*
	busy bool    // open Rows are reading it
	big  bool    // holds a bound value larger than maxScratch
	// fresh is set until the statement's first run: compiled against the
	// schema as it is now, which Rows.SchemaChanged reports.
	fresh bool
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
	compile := func() int32 {
		return sqlite3.Xsqlite3_prepare_v3(c.tls, c.db, z, -1, sqlite3.SQLITE_PREPARE_PERSISTENT, pp, 0)
	}
	rc := compile()
	for try := 0; rc == sqlite3.SQLITE_SCHEMA && try < schemaRetries; try++ {
		rc = compile()
	}
	if rc == sqlite3.SQLITE_SCHEMA {
		if rc, err = c.compilePinned(compile); err != nil { // see schemaRetries
			return nil, err
		}
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
	if err := c.releaseFast(); err != nil {
		return 0, err
	}
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
	if err := c.releaseFast(); err != nil {
		return err
	}
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

// QueryText runs a cached statement and returns the first column of its
// first row as text ("" when there is no row).
func (c *Conn) QueryText(ctx context.Context, query string, args ...any) (string, error) {
	rows, err := c.queryOne(ctx, query, args)
	if err != nil {
		return "", err
	}
	var s string
	if rows.Next() {
		s = string(rows.RawBytes(0))
	}
	return s, c.closeOne(rows)
}

// Query runs a cached statement. The Rows must be closed; until then the
// cached statement is taken, and a second Query of the same SQL on this
// connection (a nested iteration) runs on a statement of its own.
func (c *Conn) Query(ctx context.Context, query string, args ...any) (*Rows, error) {
	r := new(Rows)
	if err := c.queryInto(ctx, r, query, args); err != nil {
		return nil, err
	}
	return r, nil
}

// queryOne is Query for a caller that reads at most one row and closes
// the Rows before it returns (QueryRow, QueryInt, QueryText): the Rows is
// the connection's own, reused (Conn.one), unless one such query runs
// inside another. A write transaction's bookkeeping runs two or three of
// them, and a Rows allocated for each was a third of the bytes a lone Put
// with a feed allocated.
func (c *Conn) queryOne(ctx context.Context, query string, args []any) (*Rows, error) {
	r := &c.one
	if c.oneBusy {
		r = new(Rows)
	}
	if err := c.queryInto(ctx, r, query, args); err != nil {
		return nil, err
	}
	if r == &c.one {
		c.oneBusy = true
	}
	return r, nil
}

// closeOne closes rows from queryOne and frees the connection's own.
func (c *Conn) closeOne(rows *Rows) error {
	err := rows.Close()
	if rows == &c.one {
		c.one, c.oneBusy = Rows{}, false
	}
	return err
}

// queryInto is Query, setting *r.
func (c *Conn) queryInto(ctx context.Context, r *Rows, query string, args []any) error {
	if err := c.releaseFast(); err != nil {
		return err
	}
	s, err := c.prepare(query)
	if err != nil {
		return err
	}
	own := s.busy
	if own {
		if s, err = c.prepareNew(query); err != nil {
			return err
		}
	}
	if err := c.bind(s, args); err != nil {
		c.release(s)
		if own {
			sqlite3.Xsqlite3_finalize(c.tls, s.p)
		}
		return err
	}
	stop, err := c.watch(ctx)
	if err != nil {
		c.release(s)
		if own {
			sqlite3.Xsqlite3_finalize(c.tls, s.p)
		}
		return err
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
		return ctxErr(ctx, err)
	}
	s.busy = true
	*r = Rows{conn: c, s: s, own: own, ctx: ctx, stop: stop, ahead: row, done: !row, changed: changed}
	if !row {
		c.reset(s) // release the read lock now rather than at Close
	}
	return nil
}

// QueryRow runs a cached query and copies its first row into dest (blobs as
// []byte, texts as string, integers as int64, reals as float64, NULL as
// nil). It returns ErrNotFound (unwrapped) when there is no row.
func (c *Conn) QueryRow(ctx context.Context, query string, dest []driver.Value, args ...any) error {
	rows, err := c.queryOne(ctx, query, args)
	if err != nil {
		return err
	}
	if !rows.Next() {
		err = rows.Err()
		_ = c.closeOne(rows)
		if err == nil {
			err = ErrNotFound
		}
		return err
	}
	for i := range dest {
		dest[i] = rows.value(i)
	}
	return c.closeOne(rows)
}

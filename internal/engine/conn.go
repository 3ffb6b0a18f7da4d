package engine

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"

	"modernc.org/sqlite"
)

// maxCachedStmts bounds each connection's statement cache. Column families
// contribute a handful of statements each; past this many the cache is
// emptied and refilled on demand.
const maxCachedStmts = 512

var sqliteDriver = &sqlite.Driver{}

type stmt interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

// Conn is one SQLite connection with its prepared-statement cache. A Conn is
// used by one goroutine at a time: the pool hands it out exclusively.
type Conn struct {
	raw   driver.Conn
	stmts map[string]stmt
	busy  map[stmt]bool // cached statements with open Rows
	args  []driver.NamedValue
	broke bool // a statement failed in a way that leaves the connection unusable
}

func openConn(dsn string) (*Conn, error) {
	raw, err := sqliteDriver.Open(dsn)
	if err != nil {
		return nil, err
	}
	return &Conn{raw: raw, stmts: make(map[string]stmt), busy: make(map[stmt]bool)}, nil
}

func (c *Conn) close() error {
	for q, s := range c.stmts {
		_ = s.Close()
		delete(c.stmts, q)
	}
	return c.raw.Close()
}

func (c *Conn) prepare(ctx context.Context, query string) (stmt, error) {
	if s, ok := c.stmts[query]; ok {
		return s, nil
	}
	if len(c.stmts) >= maxCachedStmts && len(c.busy) == 0 {
		for q, s := range c.stmts {
			_ = s.Close()
			delete(c.stmts, q)
		}
	}
	ds, err := c.raw.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s, ok := ds.(stmt)
	if !ok {
		_ = ds.Close()
		return nil, fmt.Errorf("snkv: driver statement lacks context methods")
	}
	c.stmts[query] = s
	return s, nil
}

func (c *Conn) bind(args []any) []driver.NamedValue {
	c.args = c.args[:0]
	for i, a := range args {
		c.args = append(c.args, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	return c.args
}

// Exec runs a cached statement that returns no rows and reports how many
// rows it changed.
func (c *Conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	s, err := c.prepare(ctx, query)
	if err != nil {
		return 0, err
	}
	res, err := s.ExecContext(ctx, c.bind(args))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// ExecScript runs SQL that is not cached (DDL, PRAGMAs, BEGIN/COMMIT).
func (c *Conn) ExecScript(ctx context.Context, query string) error {
	_, err := c.raw.(driver.ExecerContext).ExecContext(ctx, query, nil)
	return err
}

// Query runs a cached statement. The Rows must be closed; until then the
// cached statement is taken, and a second Query of the same SQL on this
// connection (a nested iteration) runs on a statement of its own.
func (c *Conn) Query(ctx context.Context, query string, args ...any) (*Rows, error) {
	s, err := c.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	own := false
	if c.busy[s] {
		ds, err := c.raw.(driver.ConnPrepareContext).PrepareContext(ctx, query)
		if err != nil {
			return nil, err
		}
		s, own = ds.(stmt), true
	}
	r, err := s.QueryContext(ctx, c.bind(args))
	if err != nil {
		if own {
			_ = s.Close()
		}
		return nil, err
	}
	if !own {
		c.busy[s] = true
	}
	return &Rows{r: r, dest: make([]driver.Value, len(r.Columns())), conn: c, s: s, own: own}, nil
}

// QueryRow runs a cached query and copies its first row into dest. It
// returns ErrNotFound (unwrapped) when there is no row.
func (c *Conn) QueryRow(ctx context.Context, query string, dest []driver.Value, args ...any) error {
	s, err := c.prepare(ctx, query)
	if err != nil {
		return err
	}
	r, err := s.QueryContext(ctx, c.bind(args))
	if err != nil {
		return err
	}
	err = r.Next(dest)
	cerr := r.Close()
	if errors.Is(err, io.EOF) {
		err = ErrNotFound
	}
	if err == nil {
		err = cerr
	}
	return err
}

// Rows streams the result of a Query.
type Rows struct {
	r    driver.Rows
	dest []driver.Value
	err  error
	done bool // Next reached the end; stepping again would restart the statement
	conn *Conn
	s    stmt
	own  bool // s is not cached: close it with the rows
}

// Next advances to the next row; it returns false at the end or on error
// (see Err).
func (r *Rows) Next() bool {
	if r.err != nil || r.done || r.r == nil {
		return false
	}
	if err := r.r.Next(r.dest); err != nil {
		if errors.Is(err, io.EOF) {
			r.done = true
		} else {
			r.err = err
		}
		return false
	}
	return true
}

// Bytes returns column i of the current row as a fresh slice the caller owns
// (the driver copies blobs out of SQLite's memory). NULL gives nil.
func (r *Rows) Bytes(i int) []byte {
	switch v := r.dest[i].(type) {
	case []byte:
		return v
	case string:
		return []byte(v)
	}
	return nil
}

// Int returns column i of the current row as an int64 (0 for NULL).
func (r *Rows) Int(i int) int64 {
	v, _ := r.dest[i].(int64)
	return v
}

// Err reports the error that stopped Next, if any.
func (r *Rows) Err() error { return r.err }

// Close releases the statement for reuse.
func (r *Rows) Close() error {
	if r.r == nil {
		return r.err
	}
	err := r.r.Close()
	r.r = nil
	if r.own {
		err = errors.Join(err, r.s.Close())
	} else {
		delete(r.conn.busy, r.s)
	}
	if r.err == nil {
		r.err = err
	}
	return err
}

// AsBytes converts a driver value holding a blob, text or NULL to bytes.
func AsBytes(v driver.Value) []byte {
	switch x := v.(type) {
	case []byte:
		return x
	case string:
		return []byte(x)
	}
	return nil
}

// AsInt converts a driver value holding an integer (or NULL) to int64.
func AsInt(v driver.Value) int64 {
	x, _ := v.(int64)
	return x
}

// MarkBroken tells the pool not to reuse c: it could not end a transaction.
func (c *Conn) MarkBroken() { c.broke = true }

// Quote returns name as a double-quoted SQL identifier. Every table name
// snkv puts into SQL text goes through it; user data is always bound.
func Quote(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

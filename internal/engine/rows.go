package engine

import (
	"context"
	"database/sql/driver"
	"unsafe"

	"github.com/snkv-go/snkv/internal/btree"
	sqlite3 "modernc.org/sqlite/lib"
)

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
	// rec, when set, is the one row of a point read answered below SQL
	// (QueryPoint): the column family's read view, which cols indexes.
	// There is no statement then.
	rec *btree.ViewRow
	// below: the row's columns come from the fast path (fast or rec).
	below bool
	// point: these are the connection's point rows (Conn.point).
	point bool
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
	if r.below {
		return int32(r.field(i).Kind)
	}
	return sqlite3.Xsqlite3_column_type(r.conn.tls, r.s.p, int32(i))
}

// raw returns column i of the current row, a blob or a text, as bytes in
// SQLite's memory; nil for NULL or a number.
func (r *Rows) raw(i int) []byte {
	if r.below {
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
	if r.below {
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
	if r.below {
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
	if r.point {
		r.rec, r.point = nil, false
		r.conn.pointBusy = false
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
	if r.below {
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
	if r.below {
		f := r.field(i)
		return f.Int, f.Kind
	}
	c := r.conn
	v := sqlite3.Xsqlite3_column_value(c.tls, r.s.p, int32(i))
	k := sqlite3.Xsqlite3_value_type(c.tls, v)
	return sqlite3.Xsqlite3_value_int64(c.tls, v), int(k)
}

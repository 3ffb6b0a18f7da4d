package engine

import (
	"context"
	"sync/atomic"

	"github.com/snkv-go/snkv/internal/layout"

	"github.com/snkv-go/snkv/internal/btree"
)

// The columns of a column family's read view, for PointSpec.Fields.
const (
	ViewKey    = btree.ViewKey
	ViewValue  = btree.ViewValue
	ViewCrc    = btree.ViewCrc
	ViewExpiry = btree.ViewExpiry
	ViewEcrc   = btree.ViewEcrc
)

// PointSpec describes a read of one key through a column family's read
// view that may be answered straight from the B-trees (QueryPoint): the
// column family's objects, whether the value is read, and for each column
// of the SQL query the view column it reads (ViewKey …; -1: NULL).
type PointSpec struct {
	Objects *layout.Objects
	Value   bool
	Fields  []int
}

// fastReads counts the point reads answered below SQL.
var fastReads atomic.Uint64

// FastReads returns how many point reads of the process were answered
// below SQL, for tests that say which path runs.
func FastReads() uint64 { return fastReads.Load() }

// QueryPoint runs query, whose one argument is key and whose result is at
// most one row of spec's read view, as Query does; when the fast path can
// read the same row from the B-trees in the transaction the connection has
// open (package btree: the same checks as a write's), it does, and no
// statement runs. The rows, their columns and their bytes are the
// statement's. A table the fast path has not seen in the current schema
// is read with SQL, whose SchemaChanged then says whether the statement
// was compiled anew, so that the caller's checks of the schema run as they
// do without the fast path.
//
// The Rows of a read answered below SQL are the connection's own: they
// must be closed before the next QueryPoint on it (one that comes before
// reads with SQL). Their bytes are a copy the connection keeps until its
// next QueryPoint: a statement run while they are open (the decoding of a
// sealed value may look up the encryption header its snapshot holds)
// leaves them as they are, as it leaves a statement's row.
func (c *Conn) QueryPoint(ctx context.Context, query string, spec *PointSpec, key []byte) (*Rows, error) {
	if c.fastOn() && !c.pointBusy {
		if ctx != nil && ctx.Done() != nil {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		row, ok, found, fresh, err := c.fast.Lookup(spec.Objects, key, spec.Value)
		if err != nil {
			return nil, c.fastErr(err)
		}
		if ok && !fresh {
			fastReads.Add(1)
			if found {
				c.ownRow(row)
			}
			r := &c.point
			*r = Rows{conn: c, ctx: ctx, rec: row, below: true, point: true, cols: spec.Fields, ahead: found, done: true}
			c.pointBusy = true
			return r, nil
		}
	}
	return c.Query(ctx, query, key)
}

// ownRow copies the bytes of row's value and expiry out of SQLite's pages
// into the connection's buffer (one above maxScratch gets a buffer of its
// own, not kept), so that they outlive the cursors the next statement on
// the connection closes.
func (c *Conn) ownRow(row *btree.ViewRow) {
	v, e := &row[ViewValue], &row[ViewExpiry]
	n := len(v.Bytes) + len(e.Bytes)
	buf := c.pointBuf[:0]
	if n > cap(buf) {
		buf = make([]byte, 0, max(n, 256))
		if n <= maxScratch {
			c.pointBuf = buf
		}
	}
	for _, f := range []*btree.Field{v, e} {
		if f.Bytes != nil {
			at := len(buf)
			buf = append(buf, f.Bytes...)
			f.Bytes = buf[at:len(buf):len(buf)]
		}
	}
}

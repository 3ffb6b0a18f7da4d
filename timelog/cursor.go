package timelog

import (
	"fmt"
	"math"
)

// Cursor walks a snapshot's records one at a time, forward or in reverse,
// and can seek (SeekAt; the name Seek belongs to io.Seeker). Use it from one goroutine. A cursor from Log.Cursor owns
// its snapshot and must be closed; one from Snapshot.Cursor shares the
// snapshot (Close is then optional and leaves the snapshot open).
type Cursor struct {
	s     *Snapshot
	owns  bool
	rev   bool
	rd    *reader
	i     int
	rec   Record
	valid bool
	err   error
	done  bool
}

// Cursor returns a cursor over the snapshot, unpositioned: call First or
// Seek. reverse walks from the largest timestamp down.
func (s *Snapshot) Cursor(reverse bool) *Cursor { return &Cursor{s: s, rev: reverse} }

// First positions the cursor at the first record in its direction.
func (c *Cursor) First() bool {
	return c.open(fullSpan)
}

// SeekAt positions the cursor at the first record with ts >= t (in reverse:
// the last record with ts <= t) and reports whether there is one.
func (c *Cursor) SeekAt(t int64) bool {
	if c.rev {
		return c.open(span{math.MinInt64, t})
	}
	return c.open(span{t, math.MaxInt64})
}

func (c *Cursor) open(q span) bool {
	if c.done {
		return false
	}
	if c.err = c.s.check(); c.err != nil {
		c.valid = false
		return false
	}
	if c.rd != nil {
		c.rd.close()
	}
	c.rd = c.s.newReader(q, c.rev)
	c.i = -1
	return c.step()
}

// Next moves to the next record in the cursor's direction.
func (c *Cursor) Next() bool {
	if c.rd == nil || !c.valid {
		return false
	}
	return c.step()
}

func (c *Cursor) step() bool {
	for {
		c.i++
		if c.i < len(c.rd.cur) {
			x := c.rd.cur[c.i]
			if c.rev {
				x = c.rd.cur[len(c.rd.cur)-1-c.i]
			}
			c.rec, c.valid = Record{Ts: x.ts, Handle: x.h}, true
			return true
		}
		if c.err = c.s.check(); c.err != nil {
			c.valid = false
			return false
		}
		ok, err := c.rd.nextCluster()
		if err != nil || !ok {
			c.err, c.valid = fromStore(err), false
			return false
		}
		c.i = -1
	}
}

// Valid reports whether the cursor is at a record.
func (c *Cursor) Valid() bool { return c.valid }

// Record returns the record at the cursor (zero if not Valid).
func (c *Cursor) Record() Record {
	if !c.valid {
		return Record{}
	}
	return c.rec
}

// Err returns the error that stopped the cursor, if any.
func (c *Cursor) Err() error { return c.err }

// Close ends the cursor, and its snapshot if it owns one. A closed cursor
// is at no record and its Err is ErrClosed (unless an error stopped it
// before); a second Close returns nil.
func (c *Cursor) Close() error {
	if c.done {
		return nil
	}
	c.done, c.valid = true, false
	if c.err == nil {
		c.err = fmt.Errorf("timelog: cursor: %w", ErrClosed)
	}
	if c.rd != nil {
		c.rd.close()
	}
	if c.owns {
		return c.s.Close()
	}
	return nil
}

//go:build !snkv_nofast

package btree

import (
	"bytes"
	"slices"

	sqlite3 "modernc.org/sqlite/lib"
)

// The index rows of a transaction's TTL writes, written at the next flush
// in index order.
//
// PutTTL writes the data row at once, with its expiry copy, and leaves the
// key's key index and expiry index rows here. The flush writes them all:
// the key index rows in key order, then the old expiry index rows out and
// the new ones in, each in (expiry, key) order, every seek starting from
// the leaf the previous one left the cursor on (seekNear). A run of
// writes to keys scattered over the key index then reads and dirties each
// of its leaves once instead of once per key, and a leaf is not spilled to
// the WAL and dirtied again later in the same transaction.
//
// Until the flush the two indexes lack the pending rows, so everything
// that may read them flushes first: every SQL statement of the connection
// (Release; the SQL fallback, the triggers, COMMIT and savepoints), every
// other write of the same column family below SQL (Upsert, Delete,
// SetExpiry, Purge, a PutTTL without the expiry copy), a PutTTL of another
// column family, and every read below SQL (inTx at read level). A failed
// flush fails the call that made it, or the statement that Release
// precedes, and the transaction is rolled back.

// Bounds of the pending rows, after which PutTTL flushes them.
const (
	maxPending      = 1 << 16
	maxPendingBytes = 4 << 20
)

// pendingTTL is the TTL rows PutTTL has left to write, of one column
// family (its tables in r) in the write transaction on Btree bt.
type pendingTTL struct {
	bt    uintptr
	r     resolved
	ents  []pendEntry
	keys  []byte // the entries' keys, back to back
	olds  []pendOld
	oldEx []byte // the old expiries, back to back
	// unsorted and expUnsorted record, as the rows are added, that a key
	// came before the previous one, and that an (expiry, key) pair came
	// before the previous one: the flush then sorts. A run of new keys in
	// order with one expiry (or rising ones) is neither, and is written
	// without a pass over the rows to find out (0.03 µs a key).
	unsorted, expUnsorted bool
	// failed is the error of a flush no call could report (a read's),
	// which Release reports.
	failed int32
}

// pendEntry is one PutTTL's index rows: the key (keys[off:off+n]), its
// expiry and its key index checksum. old is the olds entry of the expiry
// its key index row held (-1: none, or the same expiry).
type pendEntry struct {
	off, n int32
	exp    [8]byte
	keyCrc int64
}

// pendOld is an expiry index row to delete: (oldEx[off:off+n], key of
// entry e).
type pendOld struct {
	off, n int32
	e      int32
}

func (p *pendingTTL) key(e *pendEntry) []byte { return p.keys[e.off : e.off+e.n] }

func (p *pendingTTL) oldExp(o *pendOld) []byte { return p.oldEx[o.off : o.off+o.n] }

// add records the index rows of a PutTTL of key.
func (p *pendingTTL) add(bt uintptr, r resolved, key, exp []byte, keyCrc int64) {
	p.bt, p.r = bt, r
	e := pendEntry{off: int32(len(p.keys)), n: int32(len(key)), keyCrc: keyCrc}
	copy(e.exp[:], exp)
	if n := len(p.ents); n > 0 && !p.expUnsorted {
		prev := &p.ents[n-1]
		d := bytes.Compare(key, p.key(prev))
		p.unsorted = p.unsorted || d < 0
		if de := bytes.Compare(e.exp[:], prev.exp[:]); de < 0 || de == 0 && d < 0 {
			p.expUnsorted = true
		}
	} else if n > 0 && !p.unsorted {
		p.unsorted = bytes.Compare(key, p.key(&p.ents[n-1])) < 0
	}
	p.keys = append(p.keys, key...)
	p.ents = append(p.ents, e)
}

// full reports whether the pending rows reached their bound.
func (p *pendingTTL) full() bool { return len(p.ents) >= maxPending || len(p.keys) >= maxPendingBytes }

// of reports whether rows are pending for the TTL tables of r.
func (p *pendingTTL) of(r resolved) bool { return len(p.ents) > 0 && p.r.keys == r.keys }

// reset forgets the pending rows, keeping the memory of a moderate run.
func (p *pendingTTL) reset() {
	p.ents, p.keys, p.olds, p.oldEx = p.ents[:0], p.keys[:0], p.olds[:0], p.oldEx[:0]
	p.unsorted, p.expUnsorted = false, false
	if cap(p.keys) > maxPendingBytes {
		*p = pendingTTL{failed: p.failed}
	}
}

// flushPending writes the pending index rows (see above). Whatever it
// returns, nothing is pending after it; an error means the B-trees may
// have been changed part way and the transaction must roll back.
func (c *Conn) flushPending() int32 {
	p := &c.pend
	if len(p.ents) == 0 {
		return sqlite3.SQLITE_OK
	}
	defer p.reset()
	if rc := c.openTTL(p.bt, p.r); rc != sqlite3.SQLITE_OK {
		return rc
	}
	// Key order; of a key written more than once, the last write only.
	byKey := func(a, b pendEntry) int {
		if d := bytes.Compare(p.key(&a), p.key(&b)); d != 0 {
			return d
		}
		return int(a.off - b.off) // a key's writes in their order
	}
	if p.unsorted { // new keys in order need no sort
		slices.SortFunc(p.ents, byKey)
	}
	ents := p.ents[:0]
	for i := range p.ents {
		if i+1 < len(p.ents) && bytes.Equal(p.key(&p.ents[i]), p.key(&p.ents[i+1])) {
			continue
		}
		ents = append(ents, p.ents[i])
	}
	for i := range ents {
		if rc := c.flushKeyRow(p, int32(i), &ents[i]); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	// The old expiry index rows out, in index order.
	slices.SortFunc(p.olds, func(a, b pendOld) int {
		if d := bytes.Compare(p.oldExp(&a), p.oldExp(&b)); d != 0 {
			return d
		}
		return bytes.Compare(p.key(&ents[a.e]), p.key(&ents[b.e]))
	})
	cur := c.cur[curExpiry]
	for i := range p.olds {
		o := &p.olds[i]
		res, rc := c.movetoNear(cur, c.keyInfo2, p.oldExp(o), p.key(&ents[o.e]))
		if rc == sqlite3.SQLITE_OK && res == 0 && btreeEof(c.tls, cur) == 0 {
			rc = btreeDelete(c.tls, cur, 0)
		}
		if rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	// The new ones in, in index order: a row of the same expiry is
	// replaced by itself, so that the key has its row whatever the index
	// held.
	byExpiry := func(a, b pendEntry) int {
		if d := bytes.Compare(a.exp[:], b.exp[:]); d != 0 {
			return d
		}
		return bytes.Compare(p.key(&a), p.key(&b))
	}
	// Rows added in (expiry, key) order are in that order still, less the
	// earlier writes of a key written twice; rows sorted by key above may
	// be in it too (one expiry).
	if p.expUnsorted || p.unsorted && !slices.IsSortedFunc(ents, byExpiry) {
		slices.SortFunc(ents, byExpiry)
	}
	for i := range ents {
		e := &ents[i]
		k := p.key(e)
		res, rc := c.movetoNear(cur, c.keyInfo2, e.exp[:], k)
		if rc == sqlite3.SQLITE_OK {
			rc = c.putRowAt(curExpiry, e.exp[:], k, 0, false, 2, nil, true, res)
		}
		if rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	return sqlite3.SQLITE_OK
}

// flushKeyRow gives the key of entry e (index i of the sorted entries)
// its key index row, where one descent (or a step along the leaf) finds
// the row it had, and records that row's expiry in p.olds when it differs
// (its expiry index row goes). A row already as wanted (a TTL written
// again within the millisecond) is not rewritten.
func (c *Conn) flushKeyRow(p *pendingTTL, i int32, e *pendEntry) int32 {
	cur := c.cur[curKeys]
	key := p.key(e)
	res, rc := c.movetoNear(cur, c.keyInfo1, key)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	kr, rc := c.keyRowHere(res)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	same := false
	if kr.blob {
		if bytes.Equal(kr.exp, e.exp[:]) {
			same = kr.crcOK && kr.crc == e.keyCrc
		} else {
			// Out of the page (and of c.buf), which the write below
			// changes.
			p.olds = append(p.olds, pendOld{off: int32(len(p.oldEx)), n: int32(len(kr.exp)), e: i})
			p.oldEx = append(p.oldEx, kr.exp...)
		}
	}
	if same {
		return sqlite3.SQLITE_OK
	}
	// (key, expire_ms, crc), where the seek above left the cursor.
	return c.putRowAt(curKeys, key, e.exp[:], e.keyCrc, true, 1, nil, true, res)
}

// movetoNear is moveto of cursor cur for the search key fields, first
// trying the leaf the cursor is on (seekNear).
func (c *Conn) movetoNear(cur, keyInfo uintptr, fields ...[]byte) (res int32, rc int32) {
	if goSeek {
		if res, ok := seekNear(cur, fields); ok {
			return res, sqlite3.SQLITE_OK
		}
	}
	return c.moveto(cur, keyInfo, false, fields...)
}

// seekNear positions cursor cur for the search key fields without leaving
// the leaf page it is on, when the key sorts strictly between the leaf's
// first and last rows or equals one of its rows: the row, or the place for
// it, is then on that leaf. It leaves the cursor as sqlite3BtreeIndexMoveto
// would (on the equal row, res 0, or on the row just before the key, res
// -1). ok is false when the cursor is not on a leaf, the key may lie
// elsewhere, or a cell must be read by SQLite (overflow pages, damage):
// nothing was moved.
func seekNear(cur uintptr, fields [][]byte) (res int32, ok bool) {
	bc := (*sqlite3.TBtCursor)(cptr(cur))
	if bc.FeState != cursorValid || bc.FpPage == 0 {
		return 0, false
	}
	pg := (*sqlite3.TMemPage)(cptr(bc.FpPage))
	n := int32(pg.FnCell)
	ix := int32(bc.Fix)
	if pg.Fleaf == 0 || pg.FisInit == 0 || pg.FnOverflow != 0 || n < 2 || ix >= n {
		return 0, false
	}
	at := func(i int32, r int32) (int32, bool) {
		bc.Fix = sqlite3.Tu16(i)
		bc.Finfo.FnSize = 0
		bc.FcurFlags &^= sqlite3.BTCF_ValidOvfl | sqlite3.BTCF_AtLast
		return r, true
	}
	// lo and hi: rows that sort before and after the key.
	lo, hi := ix, n-1
	cmp, good := compareCell(pg, ix, fields)
	switch {
	case !good:
		return 0, false
	case cmp == 0:
		return at(ix, 0)
	case cmp > 0:
		if ix == 0 {
			return 0, false
		}
		lo, hi = 0, ix
		if cmp, good = compareCell(pg, 0, fields); !good || cmp > 0 {
			return 0, false
		} else if cmp == 0 {
			return at(0, 0)
		}
	default:
		if ix < n-1 {
			if cmp, good = compareCell(pg, hi, fields); !good {
				return 0, false
			} else if cmp == 0 {
				return at(hi, 0)
			}
		}
		if ix == n-1 || cmp < 0 {
			// Past the leaf's last row: its place is at the leaf's end
			// if the key sorts before the row that bounds the leaf
			// above, in the nearest page up the cursor's path that
			// it did not leave through its last child (none: the last
			// leaf of the tree).
			if !belowBound(bc, fields) {
				return 0, false
			}
			return at(n-1, -1)
		}
	}
	for hi-lo > 1 {
		mid := int32(uint32(lo+hi) >> 1)
		if cmp, good = compareCell(pg, mid, fields); !good {
			return 0, false
		}
		switch {
		case cmp < 0:
			lo = mid
		case cmp > 0:
			hi = mid
		default:
			return at(mid, 0)
		}
	}
	return at(lo, -1)
}

// belowBound reports whether the search key fields sort before the row
// that bounds the leaf cursor bc is on from above (see seekNear). false
// also when a cell must be read by SQLite.
func belowBound(bc *sqlite3.TBtCursor, fields [][]byte) bool {
	for level := int(bc.FiPage) - 1; level >= 0; level-- {
		pg := (*sqlite3.TMemPage)(cptr(bc.FapPage[level]))
		idx := int32(bc.FaiIdx[level])
		if pg == nil || pg.FisInit == 0 || pg.FnOverflow != 0 {
			return false
		}
		if idx < int32(pg.FnCell) {
			cmp, good := compareCell(pg, idx, fields)
			return good && cmp > 0
		}
	}
	return true
}

//go:build !snkv_nofast

package btree

import (
	"unsafe"

	sqlite3 "modernc.org/sqlite/lib"
)

// cursor opens write cursor i on root page root, or keeps the one a
// previous call left open there.
func (c *Conn) cursor(bt uintptr, i int, root sqlite3.TPgno, keyInfo uintptr) int32 {
	return c.cursorFor(bt, i, root, keyInfo, btreeWrCsr)
}

// cursorFor is cursor with SQLite's cursor flags: btreeWrCsr for a write
// cursor, 0 for a read cursor (a point read outside a write transaction).
// A write cursor left open serves reads too.
func (c *Conn) cursorFor(bt uintptr, i int, root sqlite3.TPgno, keyInfo uintptr, flags int32) int32 {
	if c.open[i] {
		if c.openRoot[i] == root && c.openKI[i] == keyInfo && c.openFlags[i]|flags == c.openFlags[i] {
			return sqlite3.SQLITE_OK
		}
		btreeCloseCursor(c.tls, c.cur[i])
		c.open[i] = false
	}
	btreeCursorZero(c.tls, c.cur[i])
	rc := btreeCursor(c.tls, bt, root, flags, keyInfo, c.cur[i])
	c.open[i] = rc == sqlite3.SQLITE_OK
	c.openRoot[i], c.openKI[i], c.openFlags[i] = root, keyInfo, flags
	return rc
}

// closeCursors closes the cursors calls left open, and releases the pages
// point reads keep for a read transaction (interior.go).
func (c *Conn) closeCursors() {
	c.held, c.heldBt = 0, 0 // see inTx
	c.dropHeld()
	for i, o := range c.open {
		if o {
			btreeCloseCursor(c.tls, c.cur[i])
			c.open[i] = false
		}
	}
}

// end frees oversized buffers and turns rc into the call's error; a
// failed call closes its cursors.
func (c *Conn) end(rc int32) error {
	c.shrink()
	if rc != sqlite3.SQLITE_OK {
		c.closeCursors()
		return &Error{Code: int(rc)}
	}
	return nil
}

// setMem points Mem i at n bytes at p (C memory), as a BLOB.
func (c *Conn) setMem(i int, p uintptr, n int) {
	m := (*sqlite3.TMem)(cptr(c.mem + uintptr(i)*unsafe.Sizeof(sqlite3.TMem{})))
	*m = sqlite3.TMem{}
	m.Fz = p
	m.Fn = int32(n)
	m.Fflags = memBlob
	m.Fenc = encUTF8
	m.Fdb = c.db
}

// seek positions cursor i on the row whose first len(fields) fields equal
// fields (BLOBs), and reports whether there is one (see seekOn).
func (c *Conn) seek(i int, keyInfo uintptr, fields ...[]byte) (found bool, rc int32) {
	found, _, rc = c.seekOn(c.cur[i], keyInfo, fields...)
	return found, rc
}

// seekOn positions cursor cur on the row whose first len(fields) fields
// equal fields (BLOBs), and reports whether there is one; res is the
// cursor's position relative to them otherwise (<0: on a smaller row, >0:
// on a larger one; an empty tree leaves the cursor at its end).
func (c *Conn) seekOn(cur, keyInfo uintptr, fields ...[]byte) (found bool, res int32, rc int32) {
	if res, rc = c.moveto(cur, keyInfo, false, fields...); rc != sqlite3.SQLITE_OK {
		return false, 0, rc
	}
	return res == 0 && btreeEof(c.tls, cur) == 0, res, rc
}

// putRow writes the record of (a, b[, crc]) through cursor i, built
// straight in C memory, replacing the row whose first keyFields fields (1:
// a; 2: a and b) are equal.
func (c *Conn) putRow(i int, a, b []byte, crc int64, withCrc bool, keyFields int) int32 {
	return c.putRowTail(i, a, b, crc, withCrc, keyFields, nil)
}

// putRowTail is putRow of a record with a fourth field, tail as a BLOB,
// when tail is not nil (a data row's expiry copy).
func (c *Conn) putRowTail(i int, a, b []byte, crc int64, withCrc bool, keyFields int, tail []byte) int32 {
	return c.putRowAt(i, a, b, crc, withCrc, keyFields, tail, false, 0)
}

// putRowAt is putRowTail; with sought set, cursor i is where moveto left
// it for this row's key fields, with result res, and the insert takes
// that position instead of seeking again (nothing may have moved the
// cursor or changed its tree since).
func (c *Conn) putRowAt(i int, a, b []byte, crc int64, withCrc bool, keyFields int, tail []byte, sought bool, res int32) int32 {
	n := recordSize(a, b, crc, withCrc, tail)
	p, rc := c.grow(&c.buf, n)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	off := putRecord(bytesAt(p, n), a, b, crc, withCrc, tail)
	c.setMem(0, p+uintptr(off), len(a))
	if keyFields == 2 {
		c.setMem(1, p+uintptr(off+len(a)), len(b))
	}
	x := (*sqlite3.TBtreePayload)(cptr(c.payload))
	*x = sqlite3.TBtreePayload{}
	x.FpKey = p
	x.FnKey = int64(n)
	x.FaMem = c.mem
	x.FnMem = sqlite3.Tu16(keyFields)
	// The seek sqlite3BtreeInsert would make, made here, so that an append
	// is known. It is told the result and does not repeat the seek: for a
	// row to replace (res 0) only when told the cursor is on it
	// (BTREE_SAVEPOSITION; a balance then leaves the cursor to seek again
	// before its next use, which every call here makes).
	cur := c.cur[i]
	switch {
	case sought:
	case keyFields == 2:
		res, rc = c.moveto(cur, c.openKI[i], true, a, b)
	default:
		res, rc = c.moveto(cur, c.openKI[i], true, a)
	}
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	bc := (*sqlite3.TBtCursor)(cptr(cur))
	bc.Fhints = 0
	if res < 0 && onLastCell(bc) {
		bc.Fhints = btreeBulkLoad
	}
	flags := int32(0)
	if res == 0 {
		flags = btreeSavePosition
	}
	rc = btreeInsert(c.tls, cur, c.payload, flags, res)
	bc.Fhints = 0 // a delete through the same cursor balances as SQLite's do
	return rc
}

// onLastCell reports whether cursor bc is on the last row of its tree: the
// last cell of a leaf reached through the last child of every page above.
//
// A row inserted after it is an append, and the cursor is then given
// SQLite's bulk-load hint (what CREATE INDEX gives its sorted inserts):
// when the leaf splits, the rows stay on full pages to the left and the
// new page on the right takes the rest, instead of being spread evenly
// over the last pages, which a run of appends then splits again soon. A
// put in key order cost 6,900 instructions before, 4,400 with the hint
// (callgrind, 100-byte values, transactions of 1,000), and 20,000 such
// rows take 631 pages instead of 714. It changes which rows share a page,
// never the format of a page or a record.
func onLastCell(bc *sqlite3.TBtCursor) bool {
	if bc.FeState != cursorValid || bc.FpPage == 0 {
		return false
	}
	pg := (*sqlite3.TMemPage)(cptr(bc.FpPage))
	if pg.Fleaf == 0 || int(bc.Fix) != int(pg.FnCell)-1 {
		return false
	}
	for j := range int(bc.FiPage) {
		if int(bc.FaiIdx[j]) < int((*sqlite3.TMemPage)(cptr(bc.FapPage[j])).FnCell) {
			return false
		}
	}
	return true
}

// row returns the record under write cursor i (see readRow).
func (c *Conn) row(i int) ([]byte, int32) { return c.readRow(c.cur[i], &c.buf) }

// readRow returns the record under cursor cur: on its page when it fits,
// or copied whole out of its overflow pages into buf.
func (c *Conn) readRow(cur uintptr, buf *cbuf) ([]byte, int32) {
	if rec, ok := localRow(cur); ok {
		return rec, sqlite3.SQLITE_OK
	}
	size := int(btreePayloadSize(c.tls, cur))
	p := btreePayloadFetch(c.tls, cur, c.out)
	if local := int(*(*uint32)(cptr(c.out))); p != 0 && local >= size {
		return bytesAt(p, size), sqlite3.SQLITE_OK
	}
	q, rc := c.grow(buf, size)
	if rc != sqlite3.SQLITE_OK {
		return nil, rc
	}
	if rc := btreePayload(c.tls, cur, 0, sqlite3.Tu32(size), q); rc != sqlite3.SQLITE_OK {
		return nil, rc
	}
	return bytesAt(q, size), sqlite3.SQLITE_OK
}

// touchCells reads one byte of every 64-byte line of the cell content
// area of page pg and returns them folded (which the caller keeps, so that
// the reads are not dropped). A leaf's cells lie in the order they were
// written, not in key order: a scan that reads them in key order waits on
// one cache miss after another, each behind the work of a row, where
// these reads, independent of each other, wait on many at once.
func touchCells(pg *sqlite3.TMemPage) (sum byte) {
	top := uintptr(get2(pg.FaData + uintptr(pg.FhdrOffset) + 5))
	if top == 0 {
		top = 1 << 16
	}
	for p := pg.FaData + top; p < pg.FaDataEnd; p += 64 {
		sum ^= *(*byte)(cptr(p))
	}
	return sum
}

// localRow returns the record under cursor cur, a cursor on an index
// B-tree (a WITHOUT ROWID table), read straight from its cell when the
// record lies whole on the page with a size of one or two bytes (every row
// of up to 16 KiB that does not overflow): what sqlite3BtreePayloadSize
// and sqlite3BtreePayloadFetch return, without parsing the cell into the
// cursor's cache, on the per-row path of every scan. ok is false for
// anything else (a cursor not on a row, a table B-tree, a record on
// overflow pages, a cell past the page's end), which SQLite then reads.
func localRow(cur uintptr) (rec []byte, ok bool) {
	bc := (*sqlite3.TBtCursor)(cptr(cur))
	if bc.FeState != cursorValid || bc.FpPage == 0 {
		return nil, false
	}
	pg := (*sqlite3.TMemPage)(cptr(bc.FpPage))
	if pg.FintKey != 0 || bc.Fix >= pg.FnCell {
		return nil, false
	}
	return cellRecord(pg, int32(bc.Fix))
}

// stepInLeaf moves the valid cursor bc one row on (back with desc) within
// its leaf, and reports whether it did: what sqlite3BtreeNext and
// sqlite3BtreePrevious do in their common case, without the call (a scan
// takes it on every row). When the step leaves the leaf, or the cursor is
// not valid or not on a leaf, it changes nothing and SQLite must step.
func stepInLeaf(bc *sqlite3.TBtCursor, desc bool) bool {
	if bc.FeState != cursorValid || bc.FpPage == 0 {
		return false
	}
	pg := (*sqlite3.TMemPage)(cptr(bc.FpPage))
	if pg.Fleaf == 0 {
		return false
	}
	if desc {
		if bc.Fix == 0 {
			return false
		}
		bc.Fix--
		bc.FcurFlags &^= sqlite3.BTCF_AtLast | sqlite3.BTCF_ValidOvfl | sqlite3.BTCF_ValidNKey
	} else {
		if int(bc.Fix)+1 >= int(pg.FnCell) {
			return false
		}
		bc.Fix++
		bc.FcurFlags &^= sqlite3.BTCF_ValidNKey | sqlite3.BTCF_ValidOvfl
	}
	bc.Finfo.FnSize = 0
	return true
}

//go:build !snkv_nofast

package btree

import (
	_ "unsafe" // go:linkname

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// tfHasGenerated marks a table with generated columns.
const tfHasGenerated = sqlite3.TF_HasGenerated

//go:linkname btreeTableMoveto modernc.org/sqlite/lib._sqlite3BtreeTableMoveto
func btreeTableMoveto(tls *libc.TLS, pCur uintptr, intKey sqlite3.Ti64, biasRight int32, pRes uintptr) int32

// AppendChange writes the change log's row r at sequence seq into the
// rowid table named table straight into its B-tree, as
//
//	INSERT INTO table (seq, tx, at_ms, cf, op, key, value, expiry_ms) VALUES (…)
//
// does: the record putChangeRecord builds, at rowid seq. ok is false when
// the fast path cannot be used now (see the package comment; also a table
// not of the change log's shape, with an index, a CHECK, a trigger or a
// generated column, and a row at seq already, which the statement refuses):
// nothing was written and the caller runs its statement. An error is as
// Upsert's.
func (c *Conn) AppendChange(table string, seq int64, r *ChangeRow) (ok bool, err error) {
	if !c.init() {
		return false, nil
	}
	bt, ok := c.writable()
	if !ok {
		return false, nil
	}
	root := c.changeLog(table)
	if root == 0 {
		return false, nil
	}
	rc := c.cursor(bt, curLog, root, 0)
	if rc != sqlite3.SQLITE_OK {
		return true, c.end(rc)
	}
	cur := c.cur[curLog]
	bc := (*sqlite3.TBtCursor)(cptr(cur))
	res := int32(-1)
	// The cursor is still on the row the previous call appended, the last
	// of the table, when nothing balanced the tree since (a balance leaves
	// it invalid, and only this call moves it; Release closes it before
	// any SQL statement): the next sequence goes right after it, where
	// the seek would put the cursor, without descending from the root.
	if !(c.logSeq == seq-1 && seq > 0 && onLastCell(bc)) {
		rc = btreeTableMoveto(c.tls, cur, seq, 1, c.out)
		if rc != sqlite3.SQLITE_OK {
			return true, c.end(rc)
		}
		res = *(*int32)(cptr(c.out))
		if res == 0 && btreeEof(c.tls, cur) == 0 {
			return false, nil // the statement reports the duplicate
		}
	}
	t, nHdr, nBody := changeTypes(r)
	n := nHdr + nBody
	if res < 0 && appendCell(c.tls, bt, bc, seq, r, &t, nHdr, n) {
		c.logSeq = seq
		return true, c.end(sqlite3.SQLITE_OK)
	}
	p, rc := c.grow(&c.buf, n)
	if rc != sqlite3.SQLITE_OK {
		return true, c.end(rc)
	}
	putChangeRecord(bytesAt(p, n), r, &t, nHdr)
	x := (*sqlite3.TBtreePayload)(cptr(c.payload))
	*x = sqlite3.TBtreePayload{}
	x.FnKey = seq
	x.FpData = p
	x.FnData = int32(n)
	// The cursor is where the row goes (res), as after the seek an INSERT
	// makes to check the primary key: the insert does not seek again.
	c.logSeq = 0
	rc = btreeInsert(c.tls, cur, c.payload, 0, res)
	if rc == sqlite3.SQLITE_OK && bc.FeState == cursorValid {
		c.logSeq = seq
	}
	return true, c.end(rc)
}

//go:linkname pagerWrite modernc.org/sqlite/lib._sqlite3PagerWrite
func pagerWrite(tls *libc.TLS, pPg uintptr) int32

// appendCell writes the change's cell (its length, its rowid seq, then the
// record of n bytes) right after the last cell of the leaf the cursor is
// on, the last cell of the table, as sqlite3BtreeInsert with a seek result
// of -1 does when the cell fits the page's unallocated space: the page made
// writable (sqlite3PagerWrite), the cell at the top of that space, its
// pointer after the last one, the page's header and the cursor moved onto
// it. It reports false, having changed nothing, in every other case (a cell
// that overflows or does not fit, a page with free blocks, another cursor
// on the table, a blob handle open, a page whose free space is not known),
// and the caller inserts through SQLite, which balances the tree. Skipping
// the insert's generality (its checks, saving other cursors, the copy of
// the record into a scratch cell) takes about a third of the cost of a
// change's row.
func appendCell(tls *libc.TLS, bt uintptr, bc *sqlite3.TBtCursor, seq int64, r *ChangeRow, t *[changeCols]uint64, nHdr, n int) bool {
	if !onLastCell(bc) || bc.FcurFlags&sqlite3.BTCF_Multiple != 0 || (*sqlite3.TBtree)(cptr(bt)).FhasIncrblobCur != 0 || seq < 0 {
		return false
	}
	pg := (*sqlite3.TMemPage)(cptr(bc.FpPage))
	if pg.FintKeyLeaf == 0 || pg.FnOverflow != 0 || pg.FnFree < 0 || n > int(pg.FmaxLocal) {
		return false
	}
	sz := varintLen(uint64(n)) + varintLen(uint64(seq)) + n
	if sz+2 > int(pg.FnFree) {
		return false
	}
	hdr := uintptr(pg.FhdrOffset)
	h := bytesAt(pg.FaData+hdr, 8)
	if h[1] != 0 || h[2] != 0 {
		return false // free blocks: SQLite's allocator may take one
	}
	top := int(h[5])<<8 | int(h[6])
	if top == 0 {
		top = 65536
	}
	nCell := int(pg.FnCell)
	gap := int(pg.FcellOffset) + 2*nCell
	if gap+2+sz > top || int(bc.Fix) != nCell-1 {
		return false
	}
	if pagerWrite(tls, pg.FpDbPage) != sqlite3.SQLITE_OK {
		return false // nothing changed: the insert meets the error again and reports it
	}
	top -= sz
	h = bytesAt(pg.FaData+hdr, 8) // the page is writable now; its buffer is the same
	h[5], h[6] = byte(top>>8), byte(top)
	dst := bytesAt(pg.FaData+uintptr(top), sz)
	i := putVarint(dst, uint64(n))
	i += putVarint(dst[i:], uint64(seq))
	putChangeRecord(dst[i:], r, t, nHdr)
	ptr := bytesAt(pg.FaCellIdx+uintptr(2*nCell), 2)
	ptr[0], ptr[1] = byte(top>>8), byte(top)
	nCell++
	pg.FnCell = sqlite3.Tu16(nCell)
	h[3], h[4] = byte(nCell>>8), byte(nCell)
	pg.FnFree -= int32(sz + 2)
	bc.Fix++
	bc.Finfo.FnSize = 0
	bc.FcurFlags &^= sqlite3.BTCF_ValidNKey | sqlite3.BTCF_ValidOvfl
	return true
}

// changeLog returns the root page of the rowid table name if it has the
// change log's shape (changeCols columns, the first the rowid alias) and
// nothing an INSERT would also maintain or check: no index, CHECK,
// trigger or generated column; 0 otherwise. What it found is kept for the
// schema (inTx has checked it is current), as resolve's.
func (c *Conn) changeLog(name string) sqlite3.TPgno {
	if c.logName == name && c.logGen == c.gen && c.logCookie == c.cookie && name != "" {
		return c.logRoot
	}
	var root sqlite3.TPgno
	if p := c.findTable(name); p != 0 {
		tab := (*sqlite3.TTable)(cptr(p))
		if tab.FtabFlags&(tfWithoutRowid|tfHasGenerated) == 0 && tab.FeTabType == tabTypNorm &&
			int(tab.FnCol) == changeCols && tab.FiPKey == 0 && tab.FpIndex == 0 && tab.FpCheck == 0 &&
			tab.FpTrigger == 0 && tab.Ftnum > 1 {
			root = tab.Ftnum
		}
	}
	c.logName, c.logRoot, c.logGen, c.logCookie = name, root, c.gen, c.cookie
	return root
}

// changeCols is the number of columns of the change log: seq (the rowid,
// stored as NULL in the record), tx, at_ms, cf, op, key, value, expiry_ms.
const changeCols = 8

// changeTypes returns the serial types of r's record, column by column,
// and the size of its header and its body.
func changeTypes(r *ChangeRow) (t [changeCols]uint64, nHdr, nBody int) {
	// t[0]: seq, the rowid alias, is NULL in the record (serial type 0).
	var size int
	t[1], size = intSerial(r.Tx)
	nBody += size
	t[2], size = intSerial(r.AtMs)
	nBody += size
	t[3] = uint64(len(r.CF))*2 + 13
	nBody += len(r.CF)
	t[4], size = intSerial(r.Op)
	nBody += size
	if r.Key != nil {
		t[5] = uint64(len(r.Key))*2 + 12
		nBody += len(r.Key)
	}
	if r.Value != nil {
		t[6] = uint64(len(r.Value))*2 + 12
		nBody += len(r.Value)
	}
	if r.HasExpiry {
		t[7], size = intSerial(r.Expiry)
		nBody += size
	}
	for _, s := range t {
		nHdr += varintLen(s)
	}
	if nHdr <= 126 {
		return t, nHdr + 1, nBody
	}
	n := varintLen(uint64(nHdr))
	nHdr += n
	if n < varintLen(uint64(nHdr)) {
		nHdr++
	}
	return t, nHdr, nBody
}

// putChangeRecord writes into dst, which must hold nHdr+nBody bytes (see
// changeTypes, which gives t and nHdr), the record of r as SQLite's
// OP_MakeRecord writes it for the change log's INSERT (see PutRecord): the
// integers in their smallest serial type, cf as TEXT, key and value as
// BLOBs or NULL, seq as NULL (it is the rowid).
func putChangeRecord(dst []byte, r *ChangeRow, t *[changeCols]uint64, nHdr int) {
	i := putVarint(dst, uint64(nHdr))
	for _, s := range t {
		i += putVarint(dst[i:], s)
	}
	i = putInt(dst, i, r.Tx, t[1])
	i = putInt(dst, i, r.AtMs, t[2])
	i += copy(dst[i:], r.CF)
	i = putInt(dst, i, r.Op, t[4])
	i += copy(dst[i:], r.Key)
	i += copy(dst[i:], r.Value)
	if r.HasExpiry {
		putInt(dst, i, r.Expiry, t[7])
	}
}

// intBytes is the body size of each integer serial type (intSerial).
var intBytes = [10]int{0, 1, 2, 3, 4, 6, 8, 0, 0, 0}

// putInt writes v, of integer serial type serial, big-endian at dst[i:]
// and returns where the next body starts.
func putInt(dst []byte, i int, v int64, serial uint64) int {
	for j := intBytes[serial] - 1; j >= 0; j-- {
		dst[i] = byte(v >> (8 * j))
		i++
	}
	return i
}

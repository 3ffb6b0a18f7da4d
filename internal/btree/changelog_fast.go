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

//go:build !snkv_nofast

package btree

import (
	sqlite3 "modernc.org/sqlite/lib"
)

// Interior pages kept for the life of a read transaction.
//
// A point read's seek descends from the root through the interior pages
// to a leaf, and SQLite fetches every page below the root anew for each
// seek (the cursor keeps only its root from one seek to the next). With
// the database file mapped (the default), SQLite's page cache never holds
// a page read from the file: each fetch looks the page up in the WAL index
// (every hash table of the WAL, for a page not in it), asks the VFS for its
// place in the mapping, takes a page object and parses the page's header
// again (btreeInitPage). In a tree four levels deep that is three fetches
// a seek, where the interior pages are few (978 of the 31,282 pages of
// SNKV's benchmark store encrypted) and visited over and over.
//
// Inside a read transaction held from one call to the next (a reader's
// ReadHold, a caller's read-only transaction), what a page holds cannot
// change: no other connection's commit is visible to it, and this
// connection cannot write without running SQL, which Release precedes. So
// a point read there (seekHeld) keeps a reference to each interior page it
// fetches, up to maxInterior of them, and descends through them without
// asking SQLite again; only the leaf is fetched per seek. Every reference
// is dropped by closeCursors, which Release (before any SQL statement,
// among them the one that ends or upgrades the transaction), a failed
// call, a schema change and Close run: SQLite never sees a transaction end
// while this holds pages. Writes and reads inside a write transaction do
// not use it.

// maxInterior bounds the interior pages a connection keeps: every
// interior page of SNKV's benchmark store of 1,000,000 rows encrypted
// (978), about 300 KiB of page objects for pages read in place through the
// mapping. Of them, at most maxInteriorCached may be pages of SQLite's
// page cache (read from the WAL, or with the mapping off), each of which
// keeps its slot of about 4.5 KiB from being reused while it is held: the
// cache grows past its size by at most that, about 2.3 MiB, and only
// while a read transaction reads through a large WAL (356 of the 978 in
// the existence checks of SNKV's benchmark).
const (
	maxInterior       = 1024
	maxInteriorCached = 512
)

// keepInterior turns seekHeld on; the tests turn it off to compare.
var keepInterior = true

// heldPages is what seekHeld keeps: the interior pages (MemPage*, each
// referenced once) by page number, and the pages of the last seek that are
// not kept (its leaf, and interior pages past the bound), referenced until
// the next seek or closeCursors, since the row a read returns points into
// them.
type heldPages struct {
	interior map[sqlite3.TPgno]uintptr
	cached   int // how many of them are in SQLite's page cache, not mapped
	last     [maxDepth]uintptr
	nLast    int
}

// maxDepth is SQLite's BTCURSOR_MAX_DEPTH: a deeper descent is corrupt.
const maxDepth = 20

// dropHeld releases every page seekHeld holds.
func (c *Conn) dropHeld() {
	c.releaseLast()
	for pgno, pg := range c.hp.interior {
		releasePage(c.tls, pg)
		delete(c.hp.interior, pgno)
	}
	c.hp.cached = 0
}

// releaseLast releases the pages of the last seek that are not kept.
func (c *Conn) releaseLast() {
	for i := range c.hp.nLast {
		releasePage(c.tls, c.hp.last[i])
		c.hp.last[i] = 0
	}
	c.hp.nLast = 0
}

// seekHeld finds key's row in the index B-tree (a WITHOUT ROWID table) of
// root page root, in the read transaction of Btree bt, through the
// interior pages held for it (see above), without moving any cursor.
// found reports an equal row, whose record rec lies whole on its page
// (valid until the next call on c); ok is false when the caller must seek
// with its cursor instead (a row on overflow pages, a page that does not
// parse as it should, which SQLite then reports), having found nothing.
func (c *Conn) seekHeld(bt uintptr, root sqlite3.TPgno, key []byte) (rec []byte, found, ok bool) {
	c.releaseLast()
	if c.hp.interior == nil {
		c.hp.interior = make(map[sqlite3.TPgno]uintptr)
	}
	pBt := (*sqlite3.TBtree)(cptr(bt)).FpBt
	fields := [1][]byte{key}
	pgno := root
	for depth := 0; depth < maxDepth; depth++ {
		if pgno <= 1 {
			return nil, false, false // page 1 is never a table's page below its root
		}
		p, kept := c.hp.interior[pgno]
		if !kept {
			if getAndInitPage(c.tls, pBt, pgno, c.out, sqlite3.PAGER_GET_READONLY) != sqlite3.SQLITE_OK {
				return nil, false, false
			}
			p = *(*uintptr)(cptr(c.out))
			pg := (*sqlite3.TMemPage)(cptr(p))
			if pg.FintKey != 0 || pg.FnCell < 1 && (depth > 0 || pg.Fleaf == 0) {
				releasePage(c.tls, p)
				return nil, false, false // SQLite reports the corruption
			}
			if pg.Fleaf == 0 && len(c.hp.interior) < maxInterior && (mapped(pg) || c.hp.cached < maxInteriorCached) {
				c.hp.interior[pgno] = p
				if !mapped(pg) {
					c.hp.cached++
				}
			} else {
				c.hp.last[c.hp.nLast] = p
				c.hp.nLast++
			}
		}
		pg := (*sqlite3.TMemPage)(cptr(p))
		nCells := int32(pg.FnCell)
		if nCells == 0 {
			return nil, false, true // an empty tree: its root, a leaf with no cell
		}
		if havePrefetch && (kept || mapped(pg)) {
			// A kept page is mostly not in the CPU's caches either: one
			// seek in a thousand passes through each page of the last
			// interior level. A page just copied from the WAL is.
			prefetchProbes(pg, nCells)
		}
		lwr, upr := int32(0), nCells-1
		idx := upr >> 1
		for {
			cmp, good := compareCell(pg, idx, fields[:])
			if !good {
				return nil, false, false
			}
			switch {
			case cmp < 0:
				lwr = idx + 1
			case cmp > 0:
				upr = idx - 1
			default:
				rec, good := cellRecord(pg, idx)
				return rec, good, good
			}
			if lwr > upr {
				break
			}
			idx = (lwr + upr) >> 1
		}
		if pg.Fleaf != 0 {
			return nil, false, true
		}
		var child uint32
		if lwr >= nCells {
			child = get4(pg.FaData + uintptr(pg.FhdrOffset) + 8)
		} else {
			child = get4(pg.FaData + uintptr(int32(pg.FmaskPage)&int32(get2(pg.FaCellIdx+uintptr(2*lwr)))))
		}
		if havePrefetch && mapped(pg) {
			prefetchChild(pg, child)
		}
		pgno = child
	}
	return nil, false, false // deeper than SQLite allows: corrupt
}

// cellRecord returns the record of cell idx of page pg of an index B-tree
// when it lies whole on the page (what localRow reads under a cursor).
func cellRecord(pg *sqlite3.TMemPage, idx int32) ([]byte, bool) {
	cell := cellAt(pg, idx)
	n, h := uint32(*(*byte)(cptr(cell))), uintptr(1)
	if n >= 0x80 {
		b1 := *(*byte)(cptr(cell + 1))
		if b1 >= 0x80 {
			return nil, false
		}
		n, h = (n&0x7f)<<7|uint32(b1), 2
	}
	if n > uint32(pg.FmaxLocal) || cell+h+uintptr(n) > pg.FaDataEnd {
		return nil, false
	}
	return bytesAt(cell+h, int(n)), true
}

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
// mapping. Pages of SQLite's page cache (read from the WAL, or with the
// mapping off) are kept within the cache's own size, so that the cache
// does not grow past it: while one is held its slot cannot be reused, so
// at most half the cache's pages, or all but 64 of a larger cache, are
// kept (cachedLimit; 404 of the 468 pages of SQLite's default 2 MB cache,
// where the existence checks of SNKV's benchmark keep 356 read from the
// WAL, and 32 of the 64 of SmallDevice's, which reads without the
// mapping: the root and the level below it of most trees).
const maxInterior = 1024

// cachedLimit is how many of the pages of the page cache of the pager
// under BtShared pBt seekHeld may keep (see maxInterior).
func cachedLimit(pBt uintptr) int {
	pager := (*sqlite3.TPager)(cptr((*sqlite3.TBtShared)(cptr(pBt)).FpPager))
	pc := (*sqlite3.TPCache)(cptr(pager.FpPCache))
	n := int64(pc.FszCache) // SQLite's numberOfCachePages
	if n < 0 {
		n = -1024 * n / int64(pc.FszPage+pc.FszExtra)
	}
	return int(min(max(n/2, n-64), maxInterior))
}

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
	// cachedMax is cachedLimit for the transaction, once haveMax.
	cachedMax int
	haveMax   bool
	// right is the last leaf of the tree of root page rightRoot, reached
	// through the last child of every page above it (0: none).
	right     uintptr
	rightRoot sqlite3.TPgno
	last      [maxDepth]uintptr
	nLast     int
}

// maxDepth is SQLite's BTCURSOR_MAX_DEPTH: a deeper descent is corrupt.
const maxDepth = 20

// cachedMax returns cachedLimit for the pages of the current transaction.
func (c *Conn) cachedMax(pBt uintptr) int {
	if !c.hp.haveMax {
		c.hp.cachedMax, c.hp.haveMax = cachedLimit(pBt), true
	}
	return c.hp.cachedMax
}

// dropHeld releases every page seekHeld holds.
func (c *Conn) dropHeld() {
	c.releaseLast()
	if c.hp.right != 0 {
		releasePage(c.tls, c.hp.right)
		c.hp.right, c.hp.rightRoot = 0, 0
	}
	for pgno, pg := range c.hp.interior {
		releasePage(c.tls, pg)
		delete(c.hp.interior, pgno)
	}
	c.hp.cached, c.hp.haveMax = 0, false
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
	if c.hp.right != 0 && c.hp.rightRoot == root {
		// SQLite's shortcut for a cursor on the last leaf, on the last
		// leaf this transaction reached: a key after its last row is
		// after every row (a miss past the end, an append's check), and
		// one from its first row on is on it.
		pg := (*sqlite3.TMemPage)(cptr(c.hp.right))
		n := int32(pg.FnCell)
		cmp, good := compareCell(pg, n-1, fields[:])
		switch {
		case !good:
			return nil, false, false
		case cmp < 0:
			return nil, false, true
		case cmp == 0:
			rec, good := cellRecord(pg, n-1)
			return rec, good, good
		}
		if cmp, good = compareCell(pg, 0, fields[:]); !good {
			return nil, false, false
		}
		if cmp <= 0 {
			idx, _, cmp, good := searchPage(pg, fields[:])
			if !good || cmp != 0 {
				return nil, false, good
			}
			rec, good := cellRecord(pg, idx)
			return rec, good, good
		}
	}
	pgno := root
	right := true // every page so far left through its last child
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
			switch {
			case pg.Fleaf == 0 && len(c.hp.interior) < maxInterior && (mapped(pg) || c.hp.cached < c.cachedMax(pBt)):
				c.hp.interior[pgno] = p
				if !mapped(pg) {
					c.hp.cached++
				}
			case pg.Fleaf != 0 && right && pg.FnCell > 0:
				// The tree's last leaf, kept for the shortcut above.
				releasePage(c.tls, c.hp.right)
				c.hp.right, c.hp.rightRoot = p, root
			default:
				c.hp.last[c.hp.nLast] = p
				c.hp.nLast++
			}
		}
		pg := (*sqlite3.TMemPage)(cptr(p))
		nCells := int32(pg.FnCell)
		if nCells == 0 {
			return nil, false, true // an empty tree: its root, a leaf with no cell
		}
		if havePrefetch && (kept && depth >= 2 || !kept && mapped(pg)) {
			// A kept page below the root's children is mostly not in the
			// CPU's caches either: one seek in a thousand passes through
			// each of the 946 pages of the last interior level of SNKV's
			// benchmark store. The root and its children (32 pages there)
			// are read on every seek and stay cached: asking for them
			// cost more than it saved (BenchmarkEncryptionExistsWAL, five
			// rounds alternated, 699k ops/cpu-s through the WAL against
			// 649k asking on every kept page). A page just copied from
			// the WAL is cached too.
			prefetchProbes(pg, nCells)
		}
		idx, lwr, cmp, good := searchPage(pg, fields[:])
		switch {
		case !good:
			return nil, false, false
		case cmp == 0:
			rec, good := cellRecord(pg, idx)
			return rec, good, good
		case pg.Fleaf != 0:
			return nil, false, true
		}
		var child uint32
		if lwr >= nCells {
			child = get4(pg.FaData + uintptr(pg.FhdrOffset) + 8)
		} else {
			right = false
			child = get4(pg.FaData + uintptr(int32(pg.FmaskPage)&int32(get2(pg.FaCellIdx+uintptr(2*lwr)))))
		}
		if havePrefetch && mapped(pg) {
			prefetchChild(pg, child)
		}
		pgno = child
	}
	return nil, false, false // deeper than SQLite allows: corrupt
}

// searchPage is the binary search of a seek over page pg's cells (at
// least one): the cell idx it ended on, its comparison cmp with the
// search key (as compareCell's), and lwr, the first cell after the key
// (the child to descend to); good is false when a cell could not be
// compared in place.
func searchPage(pg *sqlite3.TMemPage, fields [][]byte) (idx, lwr int32, cmp int, good bool) {
	upr := int32(pg.FnCell) - 1
	idx = upr >> 1
	for {
		if cmp, good = compareCell(pg, idx, fields); !good || cmp == 0 {
			return idx, lwr, cmp, good
		}
		if cmp < 0 {
			lwr = idx + 1
		} else {
			upr = idx - 1
		}
		if lwr > upr {
			return idx, lwr, cmp, true
		}
		idx = (lwr + upr) >> 1
	}
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

//go:build !snkv_nofast

package btree

import (
	"bytes"
	"encoding/binary"

	sqlite3 "modernc.org/sqlite/lib"
)

// The seek of every fast-path call: sqlite3BtreeIndexMoveto's descent,
// made here with the comparisons in Go.
//
// A search key of the fast path is one or two BLOB fields compared in
// ascending BINARY order, for which SQLite picks its general record
// comparator (sqlite3VdbeRecordCompare): in the translated C it takes a
// stack frame from the connection's TLS allocator and parses the record
// header through several calls, for each of the 20-odd cells a seek into
// a 1M-key table probes. seekIndex makes the same descent (the same pages
// visited in the same order, the same cursor state left behind, the same
// result) with a comparison that reads the cell's record in place: 50,000
// random Exists on that table took 404M instructions instead of 566M, a
// 10,000-put transaction 220M instead of 249M (callgrind).
//
// It makes SQLite's own shortcut for a cursor already on the last leaf of
// the tree (the case of appends) the same way. Whatever it does not handle
// in place it leaves to SQLite: a cell whose record spills to overflow
// pages, and any
// record or page that does not parse as it should (SQLite then reports the
// corruption as it always did). SQLite's function then runs from the start,
// so a fallback costs the part of the descent already made, nothing else.

// goSeek turns seekIndex on; the tests turn it off to make SQLite's seek
// on the same cursors.
var goSeek = true

// moveto positions cursor cur as sqlite3BtreeIndexMoveto does for the
// search key fields (BLOBs, ordered by keyInfo, one key field or two), and
// returns its result: 0 on an equal row, <0 when left on a smaller one,
// >0 on a larger one (-1 for an empty tree). mems reports whether c.mem
// describes fields already (in C memory); if not and SQLite must seek,
// they are copied into c.kbuf first.
func (c *Conn) moveto(cur, keyInfo uintptr, mems bool, fields ...[]byte) (res int32, rc int32) {
	if goSeek {
		if res, rc, ok := c.seekIndex(cur, fields); ok {
			return res, rc
		}
	}
	if !mems {
		n := 0
		for _, f := range fields {
			n += len(f)
		}
		p, rc := c.grow(&c.kbuf, n)
		if rc != sqlite3.SQLITE_OK {
			return 0, rc
		}
		off := 0
		for j, f := range fields {
			copy(bytesAt(p+uintptr(off), len(f)), f)
			c.setMem(j, p+uintptr(off), len(f))
			off += len(f)
		}
	}
	r := (*sqlite3.TUnpackedRecord)(cptr(c.unpacked))
	*r = sqlite3.TUnpackedRecord{}
	r.FpKeyInfo = keyInfo
	r.FaMem = c.mem
	r.FnField = sqlite3.Tu16(len(fields))
	*(*int32)(cptr(c.out)) = 0
	rc = btreeIndexMoveto(c.tls, cur, c.unpacked, c.out)
	return *(*int32)(cptr(c.out)), rc
}

// seekIndex is sqlite3BtreeIndexMoveto (SQLite 3.54) for a search key of
// BLOB fields; ok is false when SQLite must make the seek instead (see
// above). The statements follow SQLite's, in its order.
func (c *Conn) seekIndex(cur uintptr, fields [][]byte) (res int32, rc int32, ok bool) {
	bc := (*sqlite3.TBtCursor)(cptr(cur))
	fromRoot := true
	if bc.FeState == cursorValid && (*sqlite3.TMemPage)(cptr(bc.FpPage)).Fleaf != 0 && cursorOnLastPage(c.tls, cur) != 0 {
		// SQLite's shortcut for a cursor on the last leaf (a run of
		// appends): on the last row, a key that sorts after it (or equal)
		// needs no move; a key from the leaf's first row on is searched
		// for on the leaf alone.
		pg := (*sqlite3.TMemPage)(cptr(bc.FpPage))
		if int32(bc.Fix) == int32(pg.FnCell)-1 {
			cmp, good := compareCell(pg, int32(bc.Fix), fields)
			if !good {
				return 0, 0, false
			}
			if cmp <= 0 {
				return int32(cmp), sqlite3.SQLITE_OK, true
			}
		}
		if bc.FiPage > 0 {
			cmp, good := compareCell(pg, 0, fields)
			if !good || cmp <= 0 && pg.FisInit == 0 {
				return 0, 0, false // SQLite reports the corruption
			}
			if cmp <= 0 {
				bc.FcurFlags &^= sqlite3.BTCF_ValidOvfl | sqlite3.BTCF_AtLast
				fromRoot = false
			}
		}
	}
	if fromRoot {
		if rc = moveToRoot(c.tls, cur); rc != sqlite3.SQLITE_OK {
			if rc == sqlite3.SQLITE_EMPTY {
				return -1, sqlite3.SQLITE_OK, true
			}
			return 0, rc, true
		}
	}
	for {
		pg := (*sqlite3.TMemPage)(cptr(bc.FpPage))
		nCells := int32(pg.FnCell)
		if havePrefetch && mapped(pg) {
			prefetchProbes(pg, nCells)
		}
		lwr, upr := int32(0), nCells-1
		idx := upr >> 1
		var cmp int
		for {
			var good bool
			if cmp, good = compareCell(pg, idx, fields); !good {
				return 0, 0, false
			}
			switch {
			case cmp < 0:
				lwr = idx + 1
			case cmp > 0:
				upr = idx - 1
			default:
				bc.Fix = sqlite3.Tu16(idx)
				bc.Finfo.FnSize = 0
				return 0, sqlite3.SQLITE_OK, true
			}
			if lwr > upr {
				break
			}
			idx = (lwr + upr) >> 1
		}
		if pg.Fleaf != 0 {
			bc.Fix = sqlite3.Tu16(idx)
			bc.Finfo.FnSize = 0
			return int32(cmp), sqlite3.SQLITE_OK, true
		}
		var child uint32
		if lwr >= nCells {
			child = get4(pg.FaData + uintptr(pg.FhdrOffset) + 8)
		} else {
			child = get4(pg.FaData + uintptr(int32(pg.FmaskPage)&int32(get2(pg.FaCellIdx+uintptr(2*lwr)))))
		}
		bc.Fix = sqlite3.Tu16(lwr)
		if havePrefetch && mapped(pg) {
			prefetchChild(pg, child)
		}
		if rc = moveToChild(c.tls, cur, child); rc != sqlite3.SQLITE_OK {
			bc.Finfo.FnSize = 0
			return 0, rc, true
		}
	}
}

// mapped reports whether page pg was read in place through the mapping of
// the database file (SQLite's PGHDR_MMAP), not from SQLite's page cache (a
// page read from the WAL, or with the mapping off): a page of a large tree
// read that way is mostly not in the CPU's caches yet.
func mapped(pg *sqlite3.TMemPage) bool {
	return pg.FpDbPage != 0 && (*sqlite3.TDbPage)(cptr(pg.FpDbPage)).Fflags&sqlite3.PGHDR_MMAP != 0
}

// probeLevels is how many levels of a page's binary search prefetchProbes
// asks for ahead: the cells of the first probeLevels probes, 2^probeLevels-1
// of them (15 of the 31 or 32 cells of a page of SNKV's benchmark rows).
const probeLevels = 4

// prefetchProbes asks for the cells the first probeLevels levels of the
// binary search over the nCells cells of page pg can probe (their first
// bytes, and 20 bytes on, where a key of up to about 16 bytes ends). On a
// page not in the CPU's caches each probe of the search waits for a cache
// miss, one after the other, since where a probe lands depends on the
// comparison before it; the cells the first levels can probe depend on
// nothing but the cell pointer array (next to the page header
// btreeInitPage has just read), so their misses are waited for together,
// and the search that follows finds those cells in the cache. Pages from
// SQLite's page cache (copied there from the WAL, so just read) are not
// worth it: the callers ask only for mapped pages.
func prefetchProbes(pg *sqlite3.TMemPage, nCells int32) {
	if nCells < 4 {
		return
	}
	var lo, hi [1 << probeLevels]int32
	lo[0], hi[0] = 0, nCells-1
	n := 1
	for i := 0; i < n; i++ {
		l, u := lo[i], hi[i]
		if l > u {
			continue
		}
		m := (l + u) >> 1
		cell := cellAt(pg, m)
		prefetch(cell) // past the page's end for a corrupt page: a hint never faults
		prefetch(cell + 20)
		if n+2 <= len(lo) {
			lo[n], hi[n] = l, m-1
			lo[n+1], hi[n+1] = m+1, u
			n += 2
		}
	}
}

// prefetchChild asks for the header of page child, which the descent
// reads next from page pg, a mapped page: child's place in the mapping
// follows from pg's. The header is btreeInitPage's first read of a page,
// a cache miss for most pages of a large tree; asked for now, it arrives
// while SQLite's pager looks the page up (in the WAL index, then in the
// mapping). A child found in the WAL is read from SQLite's copy instead,
// and the hint is wasted, as it is for a page past the mapping's end: a
// prefetch never faults.
func prefetchChild(pg *sqlite3.TMemPage, child uint32) {
	if child == 0 {
		return
	}
	size := uintptr((*sqlite3.TBtShared)(cptr(pg.FpBt)).FpageSize)
	base := pg.FaData - uintptr(pg.Fpgno-1)*size // the mapping's start
	p := base + uintptr(child-1)*size
	prefetch(p)      // the page header and the first cell pointers
	prefetch(p + 64) // the cell pointers after them
}

// compareCell is compareRecord of the record of cell idx of page pg; good
// is false for a record on overflow pages or a cell past the page's end,
// which SQLite then reads (or reports).
func compareCell(pg *sqlite3.TMemPage, idx int32, fields [][]byte) (cmp int, good bool) {
	cell := cellAt(pg, idx)
	n := int32(*(*byte)(cptr(cell)))
	var rec []byte
	switch {
	case n <= int32(pg.Fmax1bytePayload):
		if cell+uintptr(n) >= pg.FaDataEnd {
			return 0, false // corrupt: SQLite says so
		}
		rec = bytesAt(cell+1, int(n))
	default:
		b1 := *(*byte)(cptr(cell + 1))
		if b1&0x80 != 0 {
			return 0, false
		}
		n = (n&0x7f)<<7 + int32(b1)
		if n > int32(pg.FmaxLocal) || cell+uintptr(n) >= pg.FaDataEnd {
			return 0, false // overflow pages (or corrupt)
		}
		rec = bytesAt(cell+2, int(n))
	}
	return compareRecord(rec, fields)
}

// cellAt is SQLite's findCellPastPtr: cell idx of page pg, past its child
// pointer.
func cellAt(pg *sqlite3.TMemPage, idx int32) uintptr {
	return pg.FaDataOfst + uintptr(int32(pg.FmaskPage)&int32(get2(pg.FaCellIdx+uintptr(2*idx))))
}

func get2(p uintptr) uint16 {
	return uint16(*(*byte)(cptr(p)))<<8 | uint16(*(*byte)(cptr(p + 1)))
}

func get4(p uintptr) uint32 {
	return uint32(get2(p))<<16 | uint32(get2(p+2))
}

// compareRecord is sqlite3VdbeRecordCompare of the record rec (a cell's
// whole payload) against a search key of BLOB fields in ascending BINARY
// order with a default result of 0: <0 when the record sorts first. A
// field of another storage class sorts before any BLOB. good is false
// where SQLite would report corruption (a header or field past the end).
func compareRecord(rec []byte, fields [][]byte) (cmp int, good bool) {
	if len(fields) == 1 && len(rec) > 2 && rec[0] < 0x80 {
		// The common record: a header size and a first serial type of
		// one byte (a key of up to 57 bytes) or two.
		st, d := uint32(rec[1]), int(rec[0])
		if st >= 0x80 {
			if rec[2] >= 0x80 {
				return compareFields(rec, fields)
			}
			st = (st&0x7f)<<7 | uint32(rec[2])
		}
		if st < 12 || st&1 == 1 {
			return -1, true
		}
		size := int((st - 12) / 2)
		if d > len(rec) || d+size > len(rec) {
			return 0, false
		}
		return compareKeys(rec[d:d+size], fields[0]), true
	}
	return compareFields(rec, fields)
}

// compareFields is compareRecord for any record and search key.
func compareFields(rec []byte, fields [][]byte) (cmp int, good bool) {
	hdr, i := varint32(rec)
	if i == 0 || int(hdr) > len(rec) {
		return 0, false
	}
	d := int(hdr)
	for f, key := range fields {
		st, n := varint32(rec[i:])
		if n == 0 {
			return 0, false
		}
		if st < 12 || st&1 == 1 {
			return -1, true // NULL, a number or TEXT: before a BLOB
		}
		size := int((st - 12) / 2)
		if d+size > len(rec) {
			return 0, false
		}
		if cmp = compareKeys(rec[d:d+size], key); cmp != 0 {
			return cmp, true
		}
		if f == len(fields)-1 {
			break
		}
		if d += size; d > len(rec) {
			break
		}
		if i += varintLen(uint64(st)); i >= int(hdr) {
			return 0, false
		}
	}
	return 0, true
}

// varint32 is SQLite's getVarint32: the varint at the start of b, capped
// at 0xffffffff, and its length; 0 when b ends first.
func varint32(b []byte) (uint32, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint32(b[0]), 1
	}
	v, n := readVarint(b)
	if v > 0xffffffff {
		v = 0xffffffff
	}
	return uint32(v), n
}

// compareKeys is bytes.Compare's order of a and b (its sign), eight bytes
// at a time as big-endian words while both have them: for the 16-byte keys
// most stores hold, two word comparisons instead of a call into the
// runtime's general comparison, which a seek makes about twenty times.
func compareKeys(a, b []byte) int {
	for len(a) >= 8 && len(b) >= 8 {
		x, y := binary.BigEndian.Uint64(a), binary.BigEndian.Uint64(b)
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
		a, b = a[8:], b[8:]
	}
	if len(a) == 0 || len(b) == 0 {
		return len(a) - len(b)
	}
	return bytes.Compare(a, b)
}

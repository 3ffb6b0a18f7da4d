//go:build !snkv_nofast

package btree

import (
	"bytes"
	"unsafe"

	"github.com/snkv-go/snkv/internal/layout"

	sqlite3 "modernc.org/sqlite/lib"
)

// Scan reads the rows of a column family's read view in key order straight
// from its B-trees, inside the read (or write) transaction the connection
// has open: the data table's rows, and for a column family with TTL tables
// each row's key index row (the view's LEFT JOIN), read by a second cursor
// that walks the key index in the same order (ttl_scan.go). The bytes of a
// row point into SQLite's memory and are valid until the next call of Next
// or Close.
type Scan struct {
	c       *Conn
	cur     uintptr // the cursor, C memory of its own (scans nest)
	out     uintptr // 4 bytes for out values
	buf     cbuf    // a record that spills to overflow pages is copied here
	started bool
	done    bool
	desc    bool
	lo, hi  []byte
	loIncl  bool
	hiIncl  bool
	fields  []Field  // the view's columns (ViewKey …) the caller reads
	data    []Field  // the ones read from the data row (at most key, value, crc)
	fbuf    [5]Field // fields' backing array for the usual few fields
	kv      []byte   // the current row's key and value, one after the other (nil: not known)
	keys    *keyWalk // the key index's cursor (nil: no TTL tables)
	// copy: the data table has the expiry copy; fromCopy: the current
	// row's expiry and key index checksum (cp) are its copy's.
	copy, fromCopy bool
	cp             [2]Field
	// cpExp holds the current row's expiry when it is the copy's: cp[0]
	// points at it from the first such row on, and each row copies its 8
	// bytes here and sets cp[1].Int, storing no pointer (a slice stored
	// on the heap costs a write barrier while the collector runs: see row
	// below).
	cpExp [8]byte

	// The current row when it has the usual three fields (rowSpan), kept
	// as where it lies in SQLite's memory rather than as slices in fields
	// and kv, which are filled from it only when asked for (spread): a
	// slice stored on the heap costs a write barrier while the collector
	// runs, on every row, and a scan that copies its rows makes the
	// collector run often. Row reads it with no store.
	row        uintptr // the key, then the value
	klen, vlen int
	crc        int64
	compact    bool // the row is in row, klen, vlen and crc; fields and kv are stale

	page    uintptr // the leaf the current row is on
	lazy    bool    // page is the scan's first leaf, not yet touched
	due     bool    // the first leaf is to be touched once the row is in range
	onRow   bool    // the scan has been on a row
	touched byte    // what touchCells read
}

// touch reads the cells of the leaf the cursor is on (touchCells) when
// the scan first steps onto it; on the first leaf of the scan only when
// it reads a second row there and that row is in the range (due, done by
// Next after its bound check), so that a scan of one row (or none: a seek
// past the range), which reads the row after its last to find its end,
// does not pay for a whole leaf.
func (s *Scan) touch() {
	bc := (*sqlite3.TBtCursor)(cptr(s.cur))
	if page := bc.FpPage; page != s.page && page != 0 {
		s.page = page
		if !s.onRow {
			s.lazy, s.onRow = true, true
			return
		}
		s.lazy = false
		s.touched ^= touchCells((*sqlite3.TMemPage)(cptr(page)))
	} else if s.lazy {
		s.lazy, s.due = false, true
	}
}

// OpenScan opens a scan of t's read view over the keys from lo to hi
// (nil: open; loIncl, hiIncl: the bound itself included), ascending or
// descending, reading the first fields columns of each row (ViewKey …):
// the data row's key, value and checksum, then the key index row's expiry
// and checksum, NULL for a row without one or a column family without TTL
// tables. A column family with TTL tables is read only when fields covers
// the expiry (a reader that does not see it could not skip expired keys).
// ok is false when the fast path cannot read it now: the caller reads with
// its SQL statement, which it has stepped once so that a transaction and a
// current schema are in place.
func (c *Conn) OpenScan(t *layout.Objects, lo []byte, loIncl bool, hi []byte, hiIncl bool, desc bool, fields int) (s *Scan, ok bool, err error) {
	if !c.init() {
		return nil, false, nil
	}
	bt, ok := c.inTx(sqlite3.SQLITE_TXN_READ)
	if !ok {
		return nil, false, nil
	}
	r := c.resolve(t)
	if !r.ok || r.ttl && fields <= ViewExpiry {
		return nil, false, nil
	}
	s = &Scan{c: c, desc: desc, lo: lo, hi: hi, loIncl: loIncl, hiIncl: hiIncl}
	if fields <= len(s.fbuf) {
		s.fields = s.fbuf[:fields]
	} else {
		s.fields = make([]Field, fields)
	}
	s.data = s.fields[:min(fields, ViewExpiry)]
	for i := len(s.data); i < fields; i++ {
		s.fields[i] = nullField
	}
	if c.scanCur != 0 {
		// The memory of the last scan closed on this connection.
		s.cur, s.out = c.scanCur, c.scanOut
		c.scanCur, c.scanOut = 0, 0
	} else {
		s.cur = sqlite3.Xsqlite3_malloc64(c.tls, uint64(btreeCursorSize(c.tls)))
		s.out = sqlite3.Xsqlite3_malloc64(c.tls, 8)
	}
	if s.cur != 0 {
		btreeCursorZero(c.tls, s.cur) // so that Close can close it
	}
	if s.cur == 0 || s.out == 0 {
		s.Close()
		return nil, false, nil
	}
	if rc := btreeCursor(c.tls, bt, r.data, 0, c.keyInfo1, s.cur); rc != sqlite3.SQLITE_OK {
		sqlite3.Xsqlite3_free(c.tls, s.cur)
		s.cur = 0
		s.Close()
		return nil, true, &Error{Code: int(rc)}
	}
	if r.ttl {
		k, ok, err := c.openKeyWalk(bt, r.keys, desc)
		if !ok || err != nil {
			s.Close()
			return nil, ok, err
		}
		s.keys, s.copy = k, r.copy
	}
	return s, true, nil
}

// seek positions the cursor on the first row of the scan.
func (s *Scan) seek() int32 {
	tls := s.c.tls
	res := (*int32)(cptr(s.out))
	*res = 0
	bound, incl := s.lo, s.loIncl
	if s.desc {
		bound, incl = s.hi, s.hiIncl
	}
	if bound == nil {
		if s.desc {
			return btreeLast(tls, s.cur, s.out)
		}
		return btreeFirst(tls, s.cur, s.out)
	}
	_, r, rc := s.c.seekOn(s.cur, s.c.keyInfo1, bound)
	if rc != sqlite3.SQLITE_OK || btreeEof(tls, s.cur) != 0 {
		return rc
	}
	*res = r
	switch c := *res; {
	case !s.desc && (c < 0 || c == 0 && !incl):
		return btreeNext(tls, s.cur, 0)
	case s.desc && (c > 0 || c == 0 && !incl):
		return btreePrevious(tls, s.cur, 0)
	}
	return sqlite3.SQLITE_OK
}

// Next steps to the next row of the scan; false at the end.
func (s *Scan) Next() (bool, error) {
	if s.done {
		return false, nil
	}
	tls := s.c.tls
	bc := (*sqlite3.TBtCursor)(cptr(s.cur))
	var rc int32
	switch {
	case !s.started:
		s.started = true
		rc = s.seek()
	case stepInLeaf(bc, s.desc):
		// On the next row of the same leaf: valid, not at the end.
	case s.desc:
		rc = btreePrevious(tls, s.cur, 0)
	default:
		rc = btreeNext(tls, s.cur, 0)
	}
	// bc.FeState is what sqlite3BtreeEof reads.
	if rc == sqlite3.SQLITE_DONE || rc == sqlite3.SQLITE_OK && bc.FeState != cursorValid {
		s.done = true
		return false, nil
	}
	if rc != sqlite3.SQLITE_OK {
		s.done = true
		return false, &Error{Code: int(rc)}
	}
	s.touch()
	rec, rc := s.c.readRow(s.cur, &s.buf)
	if rc != sqlite3.SQLITE_OK {
		s.done = true
		return false, &Error{Code: int(rc)}
	}
	var key, tail []byte
	if hdr, k, v, crc, t, ok := rowSpan(rec); ok && len(s.data) == 3 {
		s.row = uintptr(unsafe.Pointer(unsafe.SliceData(rec))) + uintptr(hdr)
		s.klen, s.vlen, s.crc, s.compact = k-hdr, v-k, crc, true
		key, tail = rec[hdr:k:k], t
	} else {
		s.compact = false
		var ok bool
		if s.kv, tail, ok = parseRow(rec, s.data); !ok {
			s.kv, tail = nil, nil
			if !ParseRecord(rec, s.data) {
				s.done = true
				return false, &Error{Code: sqlite3.SQLITE_CORRUPT}
			}
			if s.copy {
				var f [4]Field
				if ParseRecord(rec, f[:]) && f[3].Kind == KindBlob {
					tail = f[3].Bytes
				}
			}
		}
		key = s.fields[0].Bytes
	}
	// The end bound (the key is field 0).
	if s.desc && s.lo != nil {
		if c := bytes.Compare(key, s.lo); c < 0 || c == 0 && !s.loIncl {
			s.done = true
			return false, nil
		}
	} else if !s.desc && s.hi != nil {
		if c := bytes.Compare(key, s.hi); c > 0 || c == 0 && !s.hiIncl {
			s.done = true
			return false, nil
		}
	}
	if s.due {
		s.due = false
		s.touched ^= touchCells((*sqlite3.TMemPage)(cptr(s.page)))
	}
	s.fromCopy = false
	if s.keys != nil && s.copy && tail != nil {
		// The expiry copy stands for the key index row.
		exp, ecrc, ok := splitCopy(tail)
		if !ok {
			s.done = true
			return false, &Error{Code: sqlite3.SQLITE_CORRUPT}
		}
		if s.cp[1].Kind != KindInt {
			s.cp[0], s.cp[1] = Field{Kind: KindBlob, Bytes: s.cpExp[:]}, Field{Kind: KindInt}
		}
		s.cpExp = [8]byte(exp)
		s.cp[1].Int = ecrc
		s.fromCopy = true
		s.keys.skip()
	} else if s.keys != nil {
		if rc := s.keys.match(s.c, key); rc != sqlite3.SQLITE_OK {
			s.done = true
			return false, &Error{Code: int(rc)}
		}
	}
	return true, nil
}

// Field returns column i (ViewKey …) of the current row.
func (s *Scan) Field(i int) *Field {
	if i >= ViewExpiry && s.keys != nil {
		if s.fromCopy {
			return &s.cp[i-ViewExpiry]
		}
		return s.keys.field(i)
	}
	if s.compact {
		s.spread()
	}
	return &s.fields[i]
}

// spread fills fields and kv from the row kept compact.
func (s *Scan) spread() {
	s.compact = false
	kv := bytesAt(s.row, s.klen+s.vlen)
	s.fields[0].Kind, s.fields[0].Bytes, s.fields[0].Int = KindBlob, kv[:s.klen:s.klen], 0
	s.fields[1].Kind, s.fields[1].Bytes, s.fields[1].Int = KindBlob, kv[s.klen:], 0
	s.fields[2].Kind, s.fields[2].Bytes, s.fields[2].Int = KindInt, nil, s.crc
	s.kv = kv
}

// Row returns the current row's key and value (ViewKey and ViewValue,
// both BLOBs), the two as one slice, and its checksum (ViewCrc, an
// integer), when the row has the usual three-field form; ok is false
// otherwise (read Field). Unlike Field it stores nothing.
func (s *Scan) Row() (key, value, kv []byte, crc int64, ok bool) {
	if !s.compact {
		return nil, nil, nil, 0, false
	}
	kv = bytesAt(s.row, s.klen+s.vlen)
	return kv[:s.klen:s.klen], kv[s.klen:], kv, s.crc, true
}

// KeyValue returns the current row's key and value as one slice, the key
// first (they lie one after the other in the record), or nil when the
// record is not of the usual three-field form.
func (s *Scan) KeyValue() []byte {
	if s.compact {
		return bytesAt(s.row, s.klen+s.vlen)
	}
	return s.kv
}

// Close closes the cursor and frees the scan's memory.
func (s *Scan) Close() {
	tls := s.c.tls
	if s.cur != 0 {
		btreeCloseCursor(tls, s.cur)
		if c := s.c; c.scanCur == 0 && c.payload != 0 && s.out != 0 {
			// Kept for the next scan on the connection (Conn.Close
			// frees it): one malloc and free fewer per iteration.
			c.scanCur, c.scanOut = s.cur, s.out
			s.out = 0
		} else {
			sqlite3.Xsqlite3_free(tls, s.cur)
		}
		s.cur = 0
	}
	if s.keys != nil {
		s.keys.close(s.c)
		s.keys = nil
	}
	for _, p := range []*uintptr{&s.out, &s.buf.p} {
		if *p != 0 {
			sqlite3.Xsqlite3_free(tls, *p)
			*p = 0
		}
	}
	s.done = true
}

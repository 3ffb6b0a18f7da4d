//go:build !snkv_nofast

package btree

import (
	"bytes"
	"unsafe"

	sqlite3 "modernc.org/sqlite/lib"
)

// keyWalk is the key index's side of a scan of a column family with TTL
// tables: the view's LEFT JOIN of the key index on the data table, read as
// a merge. Its cursor walks the key index in the scan's order, kept at or
// just past the data row's key, so that each data row costs one step of
// it (and a compare) where SQL's join makes a descent from the root. A key
// index row with no data row (left by another tool) is stepped over; a
// data row with no key index row gets NULLs, as the join gives it.
type keyWalk struct {
	cur     uintptr // the cursor, C memory of its own
	buf     cbuf    // a key index row that spills to overflow pages is copied here
	desc    bool
	started bool     // positioned once
	eof     bool     // past the key index's last row in the scan's order
	hit     bool     // the row under the cursor is the data row's
	joined  bool     // the row's key and expiry lie one after the other (parseRow read it)
	row     [3]Field // the row under the cursor: key, expire_ms, crc
}

// openKeyWalk opens a read cursor on the key index whose root page is
// root, for a scan in the given order. ok is false when there is no memory
// for it: the caller reads with SQL.
func (c *Conn) openKeyWalk(bt uintptr, root sqlite3.TPgno, desc bool) (k *keyWalk, ok bool, err error) {
	k = &keyWalk{desc: desc}
	k.cur = sqlite3.Xsqlite3_malloc64(c.tls, uint64(btreeCursorSize(c.tls)))
	if k.cur == 0 {
		return nil, false, nil
	}
	btreeCursorZero(c.tls, k.cur)
	if rc := btreeCursor(c.tls, bt, root, 0, c.keyInfo1, k.cur); rc != sqlite3.SQLITE_OK {
		sqlite3.Xsqlite3_free(c.tls, k.cur)
		return nil, true, &Error{Code: int(rc)}
	}
	return k, true, nil
}

// match brings the cursor to key, the key of the scan's current data row,
// and reports whether the key index has a row of that key (hit; field
// returns its columns). The first call seeks; later ones step, since the
// data rows come in the same order.
func (k *keyWalk) match(c *Conn, key []byte) int32 {
	tls := c.tls
	k.hit = false
	if !k.started {
		k.started = true
		_, _, rc := c.seekOn(k.cur, c.keyInfo1, key)
		if rc != sqlite3.SQLITE_OK {
			return rc
		}
		if btreeEof(tls, k.cur) != 0 {
			k.eof = true
		} else if rc = k.read(c); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	for !k.eof {
		cmp := bytes.Compare(k.row[0].Bytes, key)
		if cmp == 0 {
			k.hit = true
			return sqlite3.SQLITE_OK
		}
		if k.desc && cmp < 0 || !k.desc && cmp > 0 {
			return sqlite3.SQLITE_OK // the key has no key index row
		}
		var rc int32
		if k.desc {
			rc = btreePrevious(tls, k.cur, 0)
		} else {
			rc = btreeNext(tls, k.cur, 0)
		}
		switch {
		case rc == sqlite3.SQLITE_DONE || rc == sqlite3.SQLITE_OK && btreeEof(tls, k.cur) != 0:
			k.eof = true
		case rc != sqlite3.SQLITE_OK:
			return rc
		default:
			if rc = k.read(c); rc != sqlite3.SQLITE_OK {
				return rc
			}
		}
	}
	return sqlite3.SQLITE_OK
}

// skip leaves the current data row to its expiry copy: the key index is
// not read for it, and the next match seeks rather than steps (the rows in
// between may all have their copy).
func (k *keyWalk) skip() {
	k.hit, k.started, k.eof = false, false, false
}

// field returns view column i (ViewExpiry or ViewEcrc) of the current row.
func (k *keyWalk) field(i int) *Field {
	if !k.hit {
		return &nullField
	}
	return &k.row[1+i-ViewExpiry]
}

// KeyIndex reports whether the scan reads a key index beside the data
// table (a column family with TTL tables).
func (s *Scan) KeyIndex() bool { return s.keys != nil }

// KeyExpiry returns the key index row's key and expiry of the scan's
// current row as one slice, the key first (they lie one after the other in
// the record), or nil: no key index row, or one not of the usual form.
func (s *Scan) KeyExpiry() []byte {
	if s.keys == nil || !s.keys.hit || !s.keys.joined {
		return nil
	}
	k, x := s.keys.row[0].Bytes, s.keys.row[1].Bytes
	if len(k) == 0 || len(x) == 0 {
		return nil
	}
	return unsafe.Slice(&k[0], len(k)+len(x))
}

// nullField is a NULL column.
var nullField = Field{Kind: KindNull}

// read decodes the key index row under the cursor.
func (k *keyWalk) read(c *Conn) int32 {
	rec, rc := c.readRow(k.cur, &k.buf)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	// The rows snkv writes have parseRow's shape: key, expire_ms (8
	// bytes), crc. Its joined slice is not kept: KeyExpiry rebuilds it
	// from the two fields, one pointer store fewer a row.
	if _, _, k.joined = parseRow(rec, k.row[:]); k.joined {
		return sqlite3.SQLITE_OK
	}
	if !ParseRecord(rec, k.row[:]) || k.row[0].Kind != KindBlob {
		return sqlite3.SQLITE_CORRUPT
	}
	return sqlite3.SQLITE_OK
}

// close closes the cursor and frees its memory.
func (k *keyWalk) close(c *Conn) {
	if k.cur != 0 {
		btreeCloseCursor(c.tls, k.cur)
		sqlite3.Xsqlite3_free(c.tls, k.cur)
		k.cur = 0
	}
	if k.buf.p != 0 {
		sqlite3.Xsqlite3_free(c.tls, k.buf.p)
		k.buf = cbuf{}
	}
}

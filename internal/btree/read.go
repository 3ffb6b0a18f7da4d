//go:build !snkv_nofast

package btree

import (
	"encoding/binary"

	"github.com/snkv-go/snkv/internal/layout"
	sqlite3 "modernc.org/sqlite/lib"
)

// Lookup reads key's row of t as the column family's read view gives it
//
//	SELECT key, value, crc, expire_ms, ecrc FROM view WHERE key = ?
//
// straight from the B-trees, inside the read (or write) transaction the
// connection has open: the data row, and with TTL tables the key's key
// index row (the view's LEFT JOIN). row holds the view's five columns
// (ViewKey …); its bytes point into SQLite's memory or the connection's
// buffers, valid until the next call on c or the next SQL statement. With
// withValue unset only the row's existence and its TTL are read (the
// value and checksum columns are NULL). found is false for a missing key.
//
// ok is false when the fast path cannot read now (no transaction begun
// with BEGIN, or its snapshot not taken yet, a
// schema changed since it was parsed, a table of another shape): the
// caller runs its SQL statement. fresh reports that t was looked up in the
// schema for this call (its first read on the connection since the schema
// was loaded or changed), as a statement compiled anew would: the caller
// checks then what it caches about the schema.
func (c *Conn) Lookup(t *layout.Objects, key []byte, withValue bool) (row *ViewRow, ok, found, fresh bool, err error) {
	if !c.init() {
		return nil, false, false, false, nil
	}
	c.shrink() // the previous call's row is no longer read
	if c.held == 0 && !c.explicitTx() {
		// A lone statement's transaction ends when it is reset, with no
		// SQL run that would close the cursors left open here.
		return nil, false, false, false, nil
	}
	bt, ok := c.inTx(sqlite3.SQLITE_TXN_READ)
	if !ok {
		return nil, false, false, false, nil
	}
	r, fresh := c.resolveFresh(t)
	if !r.ok {
		return nil, false, false, fresh, nil
	}
	flags := int32(0)
	if c.held == txnWrite {
		flags = btreeWrCsr // the write cursors the writes keep open serve
	}
	// In a read transaction held from call to call, the seek descends
	// through the interior pages kept for it (interior.go) and returns the
	// row when it lies whole on its page; anything else seeks with the
	// cursor.
	var held []byte
	viaHeld := false
	rc := int32(sqlite3.SQLITE_OK)
	if keepInterior && c.held == sqlite3.SQLITE_TXN_READ {
		held, found, viaHeld = c.seekHeld(bt, r.data, key)
	}
	if !viaHeld {
		rc = c.cursorFor(bt, curData, r.data, c.keyInfo1, flags)
		if rc == sqlite3.SQLITE_OK {
			found, rc = c.seek(curData, c.keyInfo1, key)
		}
	}
	if rc != sqlite3.SQLITE_OK || !found {
		return nil, true, false, fresh, c.readEnd(rc)
	}
	v := &c.view
	v[ViewKey], v[ViewValue], v[ViewCrc] = Field{Kind: KindBlob, Bytes: key}, Field{Kind: KindNull}, Field{Kind: KindNull}
	var rec []byte
	if r.copy {
		// The data row may carry a copy of the key index row: then the
		// key index is not read. Without the value (Exists), only a row
		// that lies whole on its page is looked at: one on overflow pages
		// would be read whole for its last 12 bytes.
		if viaHeld {
			rec = held // whole on its page
		} else if withValue {
			if rec, rc = c.row(curData); rc != sqlite3.SQLITE_OK {
				return nil, true, false, fresh, c.readEnd(rc)
			}
		} else {
			rec, _ = localRow(c.cur[curData])
		}
	}
	if rec != nil && !withValue {
		// Exists: the copy alone, the record's last field.
		if _, _, _, _, tail, ok := rowSpan(rec); ok && tail != nil {
			exp, ecrc, ok := splitCopy(tail)
			if !ok {
				return nil, true, false, fresh, c.readEnd(sqlite3.SQLITE_CORRUPT)
			}
			v[ViewExpiry], v[ViewEcrc] = Field{Kind: KindBlob, Bytes: exp}, Field{Kind: KindInt, Int: ecrc}
			return v, true, true, fresh, nil
		}
	}
	if rec != nil {
		var f [4]Field // key, value, crc, copy
		if !ParseRecord(rec, f[:]) {
			return nil, true, false, fresh, c.readEnd(sqlite3.SQLITE_CORRUPT)
		}
		switch f[3].Kind {
		case KindNull:
		case KindBlob:
			exp, ecrc, ok := splitCopy(f[3].Bytes)
			if !ok {
				return nil, true, false, fresh, c.readEnd(sqlite3.SQLITE_CORRUPT)
			}
			if withValue {
				v[ViewValue], v[ViewCrc] = f[1], f[2]
			}
			v[ViewExpiry], v[ViewEcrc] = Field{Kind: KindBlob, Bytes: exp}, Field{Kind: KindInt, Int: ecrc}
			return v, true, true, fresh, nil
		default:
			return nil, true, false, fresh, c.readEnd(sqlite3.SQLITE_CORRUPT)
		}
		if withValue {
			v[ViewValue], v[ViewCrc] = f[1], f[2]
			withValue = false // read above
		}
	}
	if withValue {
		rec := held
		if !viaHeld {
			if rec, rc = c.row(curData); rc != sqlite3.SQLITE_OK {
				return nil, true, false, fresh, c.readEnd(rc)
			}
		}
		nData := 2
		if t.Crc {
			nData = 3
		}
		if !ParseRecord(rec, v[:nData]) {
			return nil, true, false, fresh, c.readEnd(sqlite3.SQLITE_CORRUPT)
		}
	}
	v[ViewExpiry], v[ViewEcrc] = Field{Kind: KindNull}, Field{Kind: KindNull}
	if r.ttl {
		rc = c.cursorFor(bt, curKeys, r.keys, c.keyInfo1, flags)
		var kfound bool
		if rc == sqlite3.SQLITE_OK {
			kfound, rc = c.seek(curKeys, c.keyInfo1, key)
		}
		if rc == sqlite3.SQLITE_OK && kfound {
			var krec []byte
			if krec, rc = c.readRow(c.cur[curKeys], &c.ibuf); rc == sqlite3.SQLITE_OK {
				var kf [3]Field // key, expire_ms, crc
				if !ParseRecord(krec, kf[:]) {
					rc = sqlite3.SQLITE_CORRUPT
				}
				v[ViewExpiry], v[ViewEcrc] = kf[1], kf[2]
			}
		}
		if rc != sqlite3.SQLITE_OK {
			return nil, true, false, fresh, c.readEnd(rc)
		}
	}
	return v, true, true, fresh, nil
}

// readEnd turns a point read's result code into its error; a failed read
// closes the cursors, as a failed write does.
func (c *Conn) readEnd(rc int32) error {
	if rc != sqlite3.SQLITE_OK {
		c.closeCursors()
		return &Error{Code: int(rc)}
	}
	return nil
}

// splitCopy splits a data row's expiry copy (layout.CopyColumn) into the
// expiry and the key index row's checksum, as that row's crc column holds
// it (a signed 32-bit integer). ok is false for a copy of the wrong length.
func splitCopy(b []byte) (exp []byte, ecrc int64, ok bool) {
	if len(b) != layout.CopyLen {
		return nil, 0, false
	}
	return b[:8:8], int64(int32(binary.BigEndian.Uint32(b[8:]))), true
}

// joinCopy writes into dst (layout.CopyLen bytes) the expiry copy of a key
// index row of expiry exp (8 bytes) and checksum ecrc.
func joinCopy(dst, exp []byte, ecrc int64) []byte {
	copy(dst, exp)
	binary.BigEndian.PutUint32(dst[8:], uint32(ecrc))
	return dst[:layout.CopyLen]
}

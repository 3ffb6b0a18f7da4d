//go:build !snkv_nofast

package btree

import (
	"bytes"

	"github.com/snkv-go/snkv/internal/layout"

	sqlite3 "modernc.org/sqlite/lib"
)

// Release closes the write cursors the fast path keeps open between
// calls. The connection calls it before every SQL statement it runs (a
// statement may drop or clear a table, and COMMIT and ROLLBACK end the
// transaction the cursors belong to), so that they live only across a
// run of fast-path calls. An error means the B-trees may have been
// changed part way: the caller must roll the transaction back.
func (c *Conn) Release() error {
	rc := c.flushPending()
	if rc == sqlite3.SQLITE_OK {
		rc = c.pend.failed
	}
	c.pend.failed = sqlite3.SQLITE_OK
	c.closeCursors()
	if rc != sqlite3.SQLITE_OK {
		return &Error{Code: int(rc)}
	}
	return nil
}

// endWrite is end for a write: a failed write rolls the transaction back
// (the caller's part), so the TTL rows still pending are dropped rather
// than written into it first.
func (c *Conn) endWrite(rc int32) error {
	if rc != sqlite3.SQLITE_OK {
		c.pend.reset()
	}
	return c.end(rc)
}

// settleTTL writes the index rows pending for the TTL tables of r, which
// the call about to read or write them must see.
func (c *Conn) settleTTL(r resolved) int32 {
	if c.pend.of(r) {
		return c.flushPending()
	}
	return sqlite3.SQLITE_OK
}

// upsertData writes the data row (key, value, crc) through cursor curData.
func (c *Conn) upsertData(t *layout.Objects, key, value []byte, crc int64) int32 {
	return c.putRow(curData, key, value, crc, t.Crc, 1)
}

// Upsert writes the row (key, value, crc) of t's data table, replacing
// the row of the same key, as
//
//	INSERT INTO data (key, value[, crc]) VALUES (?, ?[, ?])
//	  ON CONFLICT (key) DO UPDATE SET value = excluded.value[, crc = excluded.crc]
//
// does, the effect of the TTL triggers included (the key's TTL rows are
// removed). ok is false when the fast path cannot be used now (see the
// package comment): nothing was done and the caller runs the statement. An
// error means the B-trees may have been changed part way: the caller must
// roll the whole transaction back, as SQLite itself does after an I/O
// error.
func (c *Conn) Upsert(t *layout.Objects, key, value []byte, crc int64) (ok bool, err error) {
	bt, r, ok := c.begin(t)
	if !ok {
		return false, nil
	}
	rc := c.settleTTL(r)
	if rc == sqlite3.SQLITE_OK {
		rc = c.cursor(bt, curData, r.data, c.keyInfo1)
	}
	if rc == sqlite3.SQLITE_OK && r.ttl {
		rc = c.clearTTL(bt, r, key)
	}
	if rc == sqlite3.SQLITE_OK {
		rc = c.upsertData(t, key, value, crc)
	}
	return true, c.endWrite(rc)
}

// openTTL opens the cursors on the TTL tables.
func (c *Conn) openTTL(bt uintptr, r resolved) int32 {
	if rc := c.cursor(bt, curKeys, r.keys, c.keyInfo1); rc != sqlite3.SQLITE_OK {
		return rc
	}
	return c.cursor(bt, curExpiry, r.expiry, c.keyInfo2)
}

// clearTTL removes key's TTL rows, as the TTL triggers' body does:
//
//	DELETE FROM expiry WHERE expire_ms = (SELECT expire_ms FROM keys WHERE key = k) AND key = k;
//	DELETE FROM keys WHERE key = k;
func (c *Conn) clearTTL(bt uintptr, r resolved, key []byte) int32 {
	if rc := c.openTTL(bt, r); rc != sqlite3.SQLITE_OK {
		return rc
	}
	found, rc := c.seek(curKeys, c.keyInfo1, key)
	if rc != sqlite3.SQLITE_OK || !found {
		return rc
	}
	var f [2]Field
	rec, rc := c.row(curKeys)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	if !ParseRecord(rec, f[:]) {
		return sqlite3.SQLITE_CORRUPT
	}
	exp := f[1].Bytes
	hasExp := f[1].Kind == KindBlob
	if hasExp {
		n := copy(c.oldExp[:], exp)
		exp = c.oldExp[:n]
		if len(f[1].Bytes) > len(c.oldExp) {
			exp = bytes.Clone(f[1].Bytes)
		}
	}
	if rc := btreeDelete(c.tls, c.cur[curKeys], 0); rc != sqlite3.SQLITE_OK {
		return rc
	}
	if !hasExp {
		return sqlite3.SQLITE_OK // no expiry row can match a NULL
	}
	found, rc = c.seek(curExpiry, c.keyInfo2, exp, key)
	if rc == sqlite3.SQLITE_OK && found {
		rc = btreeDelete(c.tls, c.cur[curExpiry], 0)
	}
	return rc
}

// Delete removes the row of key from t's data table, as
// DELETE FROM data WHERE key = ? does (the TTL triggers' effect included),
// and reports whether there was one. A column family with TTL tables is
// done below SQL only with withTTL set: a caller whose delete depends on
// the key's expiry runs SQL. ok and err are as Upsert's.
func (c *Conn) Delete(t *layout.Objects, key []byte, withTTL bool) (ok, found bool, err error) {
	bt, r, ok := c.begin(t)
	if !ok || r.ttl && !withTTL {
		return false, false, nil
	}
	rc := c.settleTTL(r)
	if rc == sqlite3.SQLITE_OK {
		rc = c.cursor(bt, curData, r.data, c.keyInfo1)
	}
	if rc == sqlite3.SQLITE_OK {
		found, rc = c.seek(curData, c.keyInfo1, key)
	}
	if rc == sqlite3.SQLITE_OK && found {
		rc = btreeDelete(c.tls, c.cur[curData], 0)
		if rc == sqlite3.SQLITE_OK && r.ttl {
			rc = c.clearTTL(bt, r, key)
		}
	}
	return true, found, c.endWrite(rc)
}

// PutTTL writes the data row (key, value, crc) of t and gives key the
// expiry exp (8 bytes) with the key index checksum keyCrc, replacing any
// TTL it had: what the data upsert (whose trigger clears the old TTL rows)
// followed by
//
//	INSERT OR REPLACE INTO keys (key, expire_ms, crc) VALUES (?, ?, ?);
//	INSERT OR REPLACE INTO expiry (expire_ms, key) VALUES (?, ?);
//
// writes. t must have its TTL tables already (ok is false otherwise). ok
// and err are as Upsert's.
func (c *Conn) PutTTL(t *layout.Objects, key, value []byte, crc int64, exp []byte, keyCrc int64) (ok bool, err error) {
	bt, r, ok := c.begin(t)
	if !ok || !r.ttl {
		return false, nil
	}
	later := r.copy && len(exp) == 8
	rc := int32(sqlite3.SQLITE_OK)
	if len(c.pend.ents) > 0 && (!later || !c.pend.of(r) || c.pend.bt != bt) {
		rc = c.flushPending()
	}
	if rc == sqlite3.SQLITE_OK {
		rc = c.cursor(bt, curData, r.data, c.keyInfo1)
	}
	if rc != sqlite3.SQLITE_OK {
		return true, c.endWrite(rc)
	}
	if later {
		// The data row carries a copy of the key index row, which the
		// next flush writes with the key's expiry index row (pending.go).
		rc = c.putRowTail(curData, key, value, crc, true, 1, joinCopy(c.copyBuf[:], exp, keyCrc))
		if rc == sqlite3.SQLITE_OK {
			c.pend.add(bt, r, key, exp, keyCrc)
			if c.pend.full() {
				rc = c.flushPending()
			}
		}
		return true, c.endWrite(rc)
	}
	rc = c.upsertData(t, key, value, crc)
	if rc == sqlite3.SQLITE_OK {
		rc = c.replaceTTL(bt, r, key, exp, keyCrc)
	}
	return true, c.endWrite(rc)
}

// keyRow is what a key index row holds beside its key: its expiry (in
// the page, which a write changes), whether that is a blob, and its
// checksum, crcOK when that is an integer.
type keyRow struct {
	exp   []byte
	blob  bool
	crc   int64
	crcOK bool
}

// keyRowHere reads the key index row cursor curKeys is on after a seek
// that returned res: the zero keyRow when the seek did not find the key.
func (c *Conn) keyRowHere(res int32) (keyRow, int32) {
	if res != 0 || btreeEof(c.tls, c.cur[curKeys]) != 0 {
		return keyRow{}, sqlite3.SQLITE_OK
	}
	rec, rc := c.row(curKeys)
	if rc != sqlite3.SQLITE_OK {
		return keyRow{}, rc
	}
	var f [3]Field // key, expire_ms, crc
	if !ParseRecord(rec, f[:]) {
		return keyRow{}, sqlite3.SQLITE_CORRUPT
	}
	return keyRow{exp: f[1].Bytes, blob: f[1].Kind == KindBlob, crc: f[2].Int, crcOK: f[2].Kind == KindInt}, sqlite3.SQLITE_OK
}

// replaceTTL gives key the key index row (key, exp, keyCrc) and the
// expiry index row (exp, key) in place of the TTL rows it had (none, or
// any other expiry), as the TTL triggers' body followed by
//
//	INSERT OR REPLACE INTO keys (key, expire_ms, crc) VALUES (?, ?, ?);
//	INSERT OR REPLACE INTO expiry (expire_ms, key) VALUES (?, ?);
//
// leaves them. One descent of the key index serves both the read of the
// old expiry and the write of the new row, which is not rewritten when it
// is already the one wanted (a TTL written again within the millisecond);
// the old expiry index row is deleted only when the expiry changes.
func (c *Conn) replaceTTL(bt uintptr, r resolved, key, exp []byte, keyCrc int64) int32 {
	if rc := c.openTTL(bt, r); rc != sqlite3.SQLITE_OK {
		return rc
	}
	res, rc := c.moveto(c.cur[curKeys], c.keyInfo1, false, key)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	kr, rc := c.keyRowHere(res)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	var old []byte // the expiry the key index row held
	if kr.blob {
		// Out of the page (and of c.buf), which the writes below change.
		if len(kr.exp) <= len(c.oldExp) {
			old = c.oldExp[:copy(c.oldExp[:], kr.exp)]
		} else {
			old = bytes.Clone(kr.exp)
		}
	}
	same := old != nil && bytes.Equal(old, exp) && kr.crcOK && kr.crc == keyCrc
	if !same {
		// (key, expire_ms, crc), where the seek above left the cursor.
		if rc := c.putRowAt(curKeys, key, exp, keyCrc, true, 1, nil, true, res); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	if old != nil && !bytes.Equal(old, exp) {
		found, rc := c.seek(curExpiry, c.keyInfo2, old, key)
		if rc == sqlite3.SQLITE_OK && found {
			rc = btreeDelete(c.tls, c.cur[curExpiry], 0)
		}
		if rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	// (expire_ms, key): a row of the same expiry is replaced by itself, so
	// that the key has its row whatever the index held.
	return c.putRow(curExpiry, exp, key, 0, false, 2)
}

// SetExpiry gives key, whose data row exists, the expiry exp (8 bytes; nil:
// none) with the key index checksum keyCrc, replacing the TTL it had, and
// XORs flip into the data row's checksum (rowcodec.TTLFlag when the key
// gains or loses its TTL, else 0), as
//
//	UPDATE data SET crc = (crc | flip) - (crc & flip) WHERE key = ?;
//	DELETE FROM expiry WHERE expire_ms = (SELECT expire_ms FROM keys WHERE key = ?) AND key = ?;
//	INSERT OR REPLACE INTO keys (key, expire_ms, crc) VALUES (?, ?, ?);   -- or DELETE FROM keys, for no expiry
//	INSERT OR REPLACE INTO expiry (expire_ms, key) VALUES (?, ?);
//
// write, and with the data row's expiry copy made the new key index row
// (or none), where those statements' triggers would clear it. It is only
// for a table with the expiry copy whose row lies whole on its page (a
// value on overflow pages is not rewritten for a new expiry): otherwise ok
// is false and nothing was done. found is false for a missing row (nothing
// done). err is as Upsert's.
func (c *Conn) SetExpiry(t *layout.Objects, key, exp []byte, keyCrc, flip int64) (ok, found bool, err error) {
	bt, r, ok := c.begin(t)
	if !ok || !r.copy {
		return false, false, nil
	}
	rc := c.settleTTL(r)
	if rc == sqlite3.SQLITE_OK {
		rc = c.cursor(bt, curData, r.data, c.keyInfo1)
	}
	if rc == sqlite3.SQLITE_OK {
		found, rc = c.seek(curData, c.keyInfo1, key)
	}
	if rc != sqlite3.SQLITE_OK || !found {
		return true, false, c.endWrite(rc)
	}
	rec, local := localRow(c.cur[curData])
	if !local {
		return false, false, nil
	}
	var f [3]Field // key, value, crc
	if !ParseRecord(rec, f[:]) || f[1].Kind != KindBlob || f[2].Kind != KindInt {
		return false, false, nil // left to SQL, which reports what it finds
	}
	// The value stays in the page until the new record is built from it,
	// before the data tree is written, in the place the seek found.
	value := f[1].Bytes
	if value == nil {
		value = []byte{}
	}
	if exp == nil {
		rc = c.putRowAt(curData, key, value, f[2].Int^flip, true, 1, nil, true, 0)
		if rc == sqlite3.SQLITE_OK {
			rc = c.clearTTL(bt, r, key)
		}
		return true, true, c.endWrite(rc)
	}
	rc = c.putRowAt(curData, key, value, f[2].Int^flip, true, 1, joinCopy(c.copyBuf[:], exp, keyCrc), true, 0)
	if rc == sqlite3.SQLITE_OK {
		rc = c.replaceTTL(bt, r, key, exp, keyCrc)
	}
	return true, true, c.endWrite(rc)
}

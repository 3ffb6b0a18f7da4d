//go:build !snkv_nofast

package btree

import (
	"bytes"
	"slices"

	"github.com/snkv-go/snkv/internal/layout"

	sqlite3 "modernc.org/sqlite/lib"
)

// Expired is an entry of a column family's expiry index: the expiry (8
// bytes, big-endian milliseconds) and the key it names.
type Expired struct {
	Exp, Key []byte
}

// ExpiredHead reads, without deleting them, up to limit (<= 0: no limit)
// entries of the expiry index of t that sort below hi, from its head (the
// earliest expiries), at most purgeChunk of them and purgeChunkBytes of
// their bytes, and returns them in the index's order. dst is reused for the
// entries and buf for their bytes. more reports that a bound stopped the
// walk at an entry still below hi. ok is false (nothing read) when the
// caller must use SQL, also when an entry is not two BLOBs.
//
// A batched purge deletes the keys of the entries in key order (PurgeKeys),
// a batch per transaction: a batch then names neighbouring keys of the
// data table and the key index instead of keys scattered over both.
func (c *Conn) ExpiredHead(t *layout.Objects, hi []byte, limit int, dst []Expired, buf []byte) (ok bool, ents []Expired, bufOut []byte, more bool, err error) {
	bt, r, ok := c.begin(t)
	if !ok || !r.ttl {
		return false, dst, buf, false, nil
	}
	rc := c.settleTTL(r)
	if rc == sqlite3.SQLITE_OK {
		rc = c.openTTL(bt, r)
	}
	buf = buf[:0]
	lens := c.lens[:0] // each entry's expiry and key lengths, until buf is final
	defer func() { c.lens = lens[:0] }()
	var f [2]Field
	if rc == sqlite3.SQLITE_OK {
		rc = btreeFirst(c.tls, c.cur[curExpiry], c.out)
	}
	for rc == sqlite3.SQLITE_OK && btreeEof(c.tls, c.cur[curExpiry]) == 0 {
		if rc = c.expiryRow(f[:]); rc != sqlite3.SQLITE_OK {
			break
		}
		if f[0].Kind != KindBlob || f[1].Kind != KindBlob {
			// Not an entry snkv writes: the SQL purge deals with it.
			return false, dst[:0], buf[:0], false, c.endWrite(sqlite3.SQLITE_OK)
		}
		if bytes.Compare(f[0].Bytes, hi) >= 0 {
			break
		}
		if n := len(lens) / 2; limit > 0 && n == limit || n == purgeChunk || len(buf) >= purgeChunkBytes {
			more = true
			break
		}
		buf = append(buf, f[0].Bytes...)
		buf = append(buf, f[1].Bytes...)
		lens = append(lens, int32(len(f[0].Bytes)), int32(len(f[1].Bytes)))
		rc = btreeNext(c.tls, c.cur[curExpiry], 0)
	}
	if rc == sqlite3.SQLITE_DONE {
		rc = sqlite3.SQLITE_OK
	}
	if rc != sqlite3.SQLITE_OK {
		return true, dst[:0], buf[:0], false, c.endWrite(rc)
	}
	ents = slices.Grow(dst[:0], len(lens)/2)
	off := 0
	for i := 0; i < len(lens); i += 2 {
		ne, nk := int(lens[i]), int(lens[i+1])
		ents = append(ents, Expired{Exp: buf[off : off+ne : off+ne], Key: buf[off+ne : off+ne+nk : off+ne+nk]})
		off += ne + nk
	}
	return true, ents, buf, more, c.endWrite(rc)
}

// PurgeKeys deletes, in the order given (a purge's: by key), each
// entry whose expiry index row is still there and sorts below hi: the
// expiry index row, and the data row and key index row of its key when the
// key index row agrees with the entry's expiry (as Purge does). An entry
// whose expiry index row is gone or not below hi (its key deleted, given
// a new expiry or rewritten since it was read) is skipped and its key
// stays. It returns the entries whose data rows it deleted, in gone
// (reusing its array), and their number in n. ok and err are as Upsert's.
func (c *Conn) PurgeKeys(t *layout.Objects, hi []byte, ents []Expired, gone []Expired) (ok bool, n int, goneOut []Expired, err error) {
	gone = gone[:0]
	rc, ok := c.beginPurge(t)
	if !ok {
		return false, 0, gone, nil
	}
	var f [2]Field
	// While the entries come in the index's order (the chunk's keys sorted
	// the same way by key as by expiry: one expiry, or keys that grow with
	// it), each is the first row of the index: found there as the SQL
	// purge takes it, without a seek.
	atHead := true
	for i := 0; rc == sqlite3.SQLITE_OK && i < len(ents); i++ {
		e := ents[i]
		if bytes.Compare(e.Exp, hi) >= 0 {
			continue
		}
		found := false
		if atHead {
			if found, rc = c.firstIs(e, f[:]); rc != sqlite3.SQLITE_OK {
				break
			}
		}
		if !found {
			if found, rc = c.seek(curExpiry, c.keyInfo2, e.Exp, e.Key); rc != sqlite3.SQLITE_OK || !found {
				continue // an entry gone says nothing of the order
			}
			atHead = false
		}
		if rc = btreeDelete(c.tls, c.cur[curExpiry], 0); rc != sqlite3.SQLITE_OK {
			break
		}
		var d bool
		if d, rc = c.purgeKey(e, f[:]); d {
			gone = append(gone, e)
		}
	}
	return true, len(gone), gone, c.endWrite(rc)
}

// firstIs moves the expiry index cursor to the index's first row and
// reports whether that row is e's entry.
func (c *Conn) firstIs(e Expired, f []Field) (bool, int32) {
	rc := btreeFirst(c.tls, c.cur[curExpiry], c.out)
	if rc != sqlite3.SQLITE_OK || btreeEof(c.tls, c.cur[curExpiry]) != 0 {
		return false, rc
	}
	if rc = c.expiryRow(f); rc != sqlite3.SQLITE_OK {
		return false, rc
	}
	return f[0].Kind == KindBlob && f[1].Kind == KindBlob && bytes.Equal(f[0].Bytes, e.Exp) && bytes.Equal(f[1].Bytes, e.Key), sqlite3.SQLITE_OK
}

// purgeKey deletes the data row and the key index row of e's key when the
// key index row agrees with e's expiry, and reports whether it did.
func (c *Conn) purgeKey(e Expired, f []Field) (deleted bool, rc int32) {
	var found bool
	if found, rc = c.seek(curKeys, c.keyInfo1, e.Key); rc != sqlite3.SQLITE_OK || !found {
		return false, rc
	}
	var krec []byte
	if krec, rc = c.row(curKeys); rc != sqlite3.SQLITE_OK {
		return false, rc
	}
	if !ParseRecord(krec, f) {
		return false, sqlite3.SQLITE_CORRUPT
	}
	if f[1].Kind != KindBlob || !bytes.Equal(f[1].Bytes, e.Exp) {
		return false, sqlite3.SQLITE_OK // a key index row that disagrees: the key stays
	}
	if found, rc = c.seek(curData, c.keyInfo1, e.Key); rc != sqlite3.SQLITE_OK || !found {
		return false, rc // no data row: nothing for the trigger to do
	}
	if rc = btreeDelete(c.tls, c.cur[curData], 0); rc != sqlite3.SQLITE_OK {
		return false, rc
	}
	// The DELETE trigger: the key index row (its expiry row is gone). The
	// key index cursor is still on it: deleting a row moves only the
	// cursors of its own tree. Seek again if it was moved all the same.
	if (*sqlite3.TBtCursor)(cptr(c.cur[curKeys])).FeState != cursorValid {
		if found, rc = c.seek(curKeys, c.keyInfo1, e.Key); rc != sqlite3.SQLITE_OK || !found {
			return true, rc
		}
	}
	return true, btreeDelete(c.tls, c.cur[curKeys], 0)
}

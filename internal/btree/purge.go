//go:build !snkv_nofast

package btree

import (
	"bytes"

	"github.com/snkv-go/snkv/internal/layout"

	sqlite3 "modernc.org/sqlite/lib"
)

// Purge deletes up to limit keys whose expiry index entry sorts below hi,
// in index order, as the set-based SQL purge does: a data row goes (and
// its key index row with it) only when its key index row agrees with the
// expiry entry that names it, and every expiry entry in the range goes.
// n counts the data rows deleted; more reports that the limit stopped it
// at an expired entry. ok and err are as Upsert's.
func (c *Conn) Purge(t *layout.Objects, hi []byte, limit int) (ok bool, n int, more bool, err error) {
	bt, r, ok := c.begin(t)
	if !ok || !r.ttl {
		return false, 0, false, nil
	}
	rc := c.cursor(bt, curData, r.data, c.keyInfo1)
	if rc == sqlite3.SQLITE_OK {
		rc = c.openTTL(bt, r)
	}
	var f [2]Field
	var exp, key []byte
	for seen := 0; rc == sqlite3.SQLITE_OK; seen++ {
		if limit > 0 && seen == limit {
			more = true
			break
		}
		rc = btreeFirst(c.tls, c.cur[curExpiry], c.out)
		if rc != sqlite3.SQLITE_OK || btreeEof(c.tls, c.cur[curExpiry]) != 0 {
			break
		}
		var rec []byte
		if rec, rc = c.row(curExpiry); rc != sqlite3.SQLITE_OK {
			break
		}
		if !ParseRecord(rec, f[:]) {
			rc = sqlite3.SQLITE_CORRUPT
			break
		}
		if bytes.Compare(f[0].Bytes, hi) >= 0 {
			break
		}
		exp, key = append(exp[:0], f[0].Bytes...), append(key[:0], f[1].Bytes...)
		if rc = btreeDelete(c.tls, c.cur[curExpiry], 0); rc != sqlite3.SQLITE_OK {
			break
		}
		var found bool
		if found, rc = c.seek(curKeys, c.keyInfo1, key); rc != sqlite3.SQLITE_OK || !found {
			continue
		}
		var krec []byte
		if krec, rc = c.row(curKeys); rc != sqlite3.SQLITE_OK {
			break
		}
		if !ParseRecord(krec, f[:]) {
			rc = sqlite3.SQLITE_CORRUPT
			break
		}
		if f[1].Kind != KindBlob || !bytes.Equal(f[1].Bytes, exp) {
			continue // a key index row that disagrees: the key stays
		}
		if found, rc = c.seek(curData, c.keyInfo1, key); rc != sqlite3.SQLITE_OK || !found {
			continue // no data row: nothing for the trigger to do
		}
		if rc = btreeDelete(c.tls, c.cur[curData], 0); rc != sqlite3.SQLITE_OK {
			break
		}
		n++
		// The DELETE trigger: the key index row (its expiry row is gone).
		// The key index cursor is still on it: deleting a row moves only
		// the cursors of its own tree. Seek again if it was moved all the
		// same.
		if (*sqlite3.TBtCursor)(cptr(c.cur[curKeys])).FeState != cursorValid {
			if found, rc = c.seek(curKeys, c.keyInfo1, key); rc != sqlite3.SQLITE_OK || !found {
				continue
			}
		}
		rc = btreeDelete(c.tls, c.cur[curKeys], 0)
	}
	return true, n, more, c.end(rc)
}

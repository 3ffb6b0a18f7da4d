//go:build !snkv_nofast

package btree

import (
	"bytes"
	"slices"

	"github.com/snkv-go/snkv/internal/layout"

	sqlite3 "modernc.org/sqlite/lib"
)

// purgeChunk bounds how many expired entries Purge takes off the expiry
// index before it deletes their keys, and purgeChunkBytes the bytes of
// their expiries and keys that it holds in memory meanwhile. A purge of
// 100,000 scattered keys in one transaction took 1.9 times the CPU time
// with chunks of 4,096 entries as with chunks this size (one chunk there).
const (
	purgeChunk      = 1 << 16
	purgeChunkBytes = 4 << 20
)

// expiredEntry is an expiry index entry Purge took off the index: the
// entry's expiry and the key it names, and their lengths.
type expiredEntry struct {
	exp, key []byte
	ne, nk   int
}

// Purge deletes up to limit keys whose expiry index entry sorts below hi,
// in index order, as the set-based SQL purge does: a data row goes (and
// its key index row with it) only when its key index row agrees with the
// expiry entry that names it, and every expiry entry in the range goes.
// n counts the data rows deleted; more reports that the limit stopped it
// at an expired entry. ok and err are as Upsert's.
//
// It works in chunks: it takes up to purgeChunk expired entries off the
// head of the expiry index (one sequential walk), then visits their keys
// in key order, as SQLite does for `DELETE … WHERE key IN (SELECT …)`: the
// keys of entries in expiry order are scattered over the key index and the
// data table, and visiting them sorted reads and dirties each page once
// per chunk instead of once per key.
func (c *Conn) Purge(t *layout.Objects, hi []byte, limit int) (ok bool, n int, more bool, err error) {
	rc, ok := c.beginPurge(t)
	if !ok {
		return false, 0, false, nil
	}
	var f [2]Field
	var chunk []expiredEntry
	var buf []byte // the chunk's expiries and keys, back to back
	seen, done := 0, false
	for rc == sqlite3.SQLITE_OK && !done {
		chunk, buf = chunk[:0], buf[:0]
		for rc == sqlite3.SQLITE_OK && len(chunk) < purgeChunk && len(buf) < purgeChunkBytes {
			if limit > 0 && seen == limit {
				more, done = true, true
				break
			}
			rc = btreeFirst(c.tls, c.cur[curExpiry], c.out)
			if rc != sqlite3.SQLITE_OK || btreeEof(c.tls, c.cur[curExpiry]) != 0 {
				done = true
				break
			}
			if rc = c.expiryRow(f[:]); rc != sqlite3.SQLITE_OK {
				break
			}
			if bytes.Compare(f[0].Bytes, hi) >= 0 {
				done = true
				break
			}
			// The entry's bytes live in SQLite's page until the delete:
			// copy them out first. buf may move as it grows, so the
			// entries are cut out of it once the chunk is complete; until
			// then an entry holds only its lengths.
			buf = append(buf, f[0].Bytes...)
			buf = append(buf, f[1].Bytes...)
			chunk = append(chunk, expiredEntry{ne: len(f[0].Bytes), nk: len(f[1].Bytes)})
			seen++
			rc = btreeDelete(c.tls, c.cur[curExpiry], 0)
		}
		if rc != sqlite3.SQLITE_OK {
			break
		}
		off := 0
		for i := range chunk {
			ne, nk := chunk[i].ne, chunk[i].nk
			chunk[i].exp = buf[off : off+ne : off+ne]
			chunk[i].key = buf[off+ne : off+ne+nk : off+ne+nk]
			off += ne + nk
		}
		slices.SortFunc(chunk, func(a, b expiredEntry) int { return bytes.Compare(a.key, b.key) })
		var d int
		d, rc = c.purgeKeys(chunk, f[:])
		n += d
	}
	return true, n, more, c.endWrite(rc)
}

// purgeKeys deletes the data row and the key index row of each entry's
// key, in the order given, when the key index row agrees with the entry's
// expiry; it returns how many data rows it deleted.
func (c *Conn) purgeKeys(chunk []expiredEntry, f []Field) (n int, rc int32) {
	for _, e := range chunk {
		deleted, rc := c.purgeKey(Expired{Exp: e.exp, Key: e.key}, f)
		if rc != sqlite3.SQLITE_OK {
			return n, rc
		}
		if deleted {
			n++
		}
	}
	return n, sqlite3.SQLITE_OK
}

// beginPurge begins a purge of t's expired keys below SQL (Purge,
// PurgeKeys): the write cursors on the data table and the two TTL tables,
// the pending TTL rows written first. ok is false when the fast path
// cannot take it (nothing done); rc is the first failure, which the caller
// ends with.
func (c *Conn) beginPurge(t *layout.Objects) (rc int32, ok bool) {
	bt, r, ok := c.begin(t)
	if !ok || !r.ttl {
		return sqlite3.SQLITE_OK, false
	}
	rc = c.settleTTL(r)
	if rc == sqlite3.SQLITE_OK {
		rc = c.cursor(bt, curData, r.data, c.keyInfo1)
	}
	if rc == sqlite3.SQLITE_OK {
		rc = c.openTTL(bt, r)
	}
	return rc, true
}

// expiryRow reads the expiry index row under its cursor into f (its
// expiry and key fields).
func (c *Conn) expiryRow(f []Field) int32 {
	rec, rc := c.row(curExpiry)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	if !ParseRecord(rec, f) {
		return sqlite3.SQLITE_CORRUPT
	}
	return sqlite3.SQLITE_OK
}

//go:build !snkv_nofast

package btree

import (
	"bytes"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// Enabled reports whether the fast path is built in.
const Enabled = true

// SQLite's internal constants, as the library defines them.
const (
	tfWithoutRowid = sqlite3.TF_WithoutRowid
	tabTypNorm     = sqlite3.TABTYP_NORM
	dbSchemaLoaded = sqlite3.DB_SchemaLoaded
	txnWrite       = sqlite3.SQLITE_TXN_WRITE
	btreeWrCsr     = sqlite3.BTREE_WRCSR
	metaSchemaVer  = sqlite3.BTREE_SCHEMA_VERSION
	memBlob        = sqlite3.MEM_Blob
	encUTF8        = sqlite3.SQLITE_UTF8
)

// maxCachedBuf: a buffer grown past it is freed after the call.
const maxCachedBuf = 64 << 10

// The write cursors a call may hold at once, one per table.
const (
	curData = iota
	curKeys
	curExpiry
	nCursors
)

// Conn is the fast path of one SQLite connection. Like the connection, it
// is used by one goroutine at a time.
type Conn struct {
	tls *libc.TLS
	db  uintptr // sqlite3*

	// C memory the calls share: write cursors, the payload descriptor, two
	// Mems (the fields a look-up compares), an unpacked record, an out
	// value, and buffers for a record and for a look-up's key.
	cur  [nCursors]uintptr
	open [nCursors]bool
	// Each open cursor's root page and key info: a cursor stays open from
	// one call to the next on the same table (Release closes it), so that
	// a run of writes in key order finds its place without descending
	// from the root (SQLite's own shortcut for a cursor on the last leaf).
	openRoot               [nCursors]sqlite3.TPgno
	openKI                 [nCursors]uintptr
	payload, mem, unpacked uintptr
	out                    uintptr
	keyInfo1, keyInfo2     uintptr // one key field (data, keys), two (expiry)
	buf, kbuf              cbuf
	oldExp                 [8]byte

	// tables caches what resolve found, for one schema: its generation (a
	// reload from the file makes a new one) and its cookie (a change this
	// connection makes itself keeps the generation).
	gen, cookie int32
	tables      map[string]resolved
	last        *Table // the Table resolve saw last, and what it found
	lastR       resolved
}

// resolved is what the fast path found of a Table in one schema.
type resolved struct {
	ok                 bool // the fast path may read and write it
	ttl                bool // its TTL tables and triggers exist
	data, keys, expiry sqlite3.TPgno
}

// cbuf is a growable buffer in C memory.
type cbuf struct {
	p uintptr
	n int
}

// New returns the fast path of the connection db (a sqlite3*), which tls
// serves. Close it before the connection.
func New(tls *libc.TLS, db uintptr) *Conn {
	return &Conn{tls: tls, db: db, gen: -1}
}

// Close frees the C memory the fast path holds.
func (c *Conn) Close() {
	c.closeCursors()
	for _, p := range []*uintptr{&c.cur[0], &c.cur[1], &c.cur[2], &c.payload, &c.mem, &c.out, &c.unpacked, &c.buf.p, &c.kbuf.p} {
		if *p != 0 {
			sqlite3.Xsqlite3_free(c.tls, *p)
			*p = 0
		}
	}
	for _, k := range []*uintptr{&c.keyInfo1, &c.keyInfo2} {
		if *k != 0 {
			keyInfoUnref(c.tls, *k)
			*k = 0
		}
	}
	c.buf.n, c.kbuf.n = 0, 0
}

func cptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// bytesAt is n bytes of C memory at p.
func bytesAt(p uintptr, n int) []byte { return unsafe.Slice((*byte)(cptr(p)), n) }

// init allocates the C memory the calls share.
func (c *Conn) init() bool {
	if c.payload != 0 {
		return true
	}
	alloc := func(n int) uintptr {
		p := sqlite3.Xsqlite3_malloc64(c.tls, uint64(n))
		if p != 0 {
			clear(bytesAt(p, n))
		}
		return p
	}
	ok := true
	for i := range c.cur {
		c.cur[i] = alloc(int(btreeCursorSize(c.tls)))
		ok = ok && c.cur[i] != 0
	}
	c.payload = alloc(int(unsafe.Sizeof(sqlite3.TBtreePayload{})))
	c.mem = alloc(2 * int(unsafe.Sizeof(sqlite3.TMem{})))
	c.unpacked = alloc(int(unsafe.Sizeof(sqlite3.TUnpackedRecord{})))
	c.out = alloc(8)
	c.keyInfo1 = keyInfoAlloc(c.tls, c.db, 1, 2)
	c.keyInfo2 = keyInfoAlloc(c.tls, c.db, 2, 0)
	if !ok || c.payload == 0 || c.mem == 0 || c.unpacked == 0 || c.out == 0 || c.keyInfo1 == 0 || c.keyInfo2 == 0 {
		c.Close()
		return false
	}
	return true
}

// grow returns b's memory, at least n bytes.
func (c *Conn) grow(b *cbuf, n int) (uintptr, int32) {
	if n > b.n {
		size := max(n, 2*b.n, 256)
		p := sqlite3.Xsqlite3_realloc64(c.tls, b.p, uint64(size))
		if p == 0 {
			return 0, sqlite3.SQLITE_NOMEM
		}
		b.p, b.n = p, size
	}
	return b.p, sqlite3.SQLITE_OK
}

// shrink frees buffers grown past maxCachedBuf, so that one large value
// does not pin its size for the connection's life.
func (c *Conn) shrink() {
	for _, b := range []*cbuf{&c.buf, &c.kbuf} {
		if b.n > maxCachedBuf {
			sqlite3.Xsqlite3_free(c.tls, b.p)
			*b = cbuf{}
		}
	}
}

// mainDb returns the main database's Btree* and Schema*.
func (c *Conn) mainDb() (bt, schema uintptr) {
	d := (*sqlite3.Tsqlite3)(cptr(c.db))
	main := (*sqlite3.TDb)(cptr(d.FaDb))
	return main.FpBt, main.FpSchema
}

// inTx reports whether the connection has a transaction of at least level
// (SQLITE_TXN_READ, SQLITE_TXN_WRITE) open on a parsed schema that is
// current, and returns the main Btree*. A schema changed by another
// connection since it was parsed, or not parsed yet, means no: the
// caller's SQL statement reloads it.
func (c *Conn) inTx(level int32) (uintptr, bool) {
	bt, sp := c.mainDb()
	if bt == 0 || sp == 0 || btreeTxnState(c.tls, bt) < level {
		return 0, false
	}
	schema := (*sqlite3.TSchema)(cptr(sp))
	if schema.FschemaFlags&dbSchemaLoaded == 0 {
		return 0, false
	}
	btreeGetMeta(c.tls, bt, metaSchemaVer, c.out)
	if *(*int32)(cptr(c.out)) != schema.Fschema_cookie {
		return 0, false
	}
	if schema.FiGeneration != c.gen || schema.Fschema_cookie != c.cookie {
		c.Release()
		clear(c.tables)
		c.last = nil
		c.gen, c.cookie = schema.FiGeneration, schema.Fschema_cookie
	}
	return bt, true
}

// writable is inTx for a write: the connection must be in a write
// transaction (never a lone statement, which commits on its own).
func (c *Conn) writable() (uintptr, bool) {
	if (*sqlite3.Tsqlite3)(cptr(c.db)).FautoCommit != 0 {
		return 0, false
	}
	return c.inTx(txnWrite)
}

// findTable returns the Table* of name in the main schema, or 0.
func (c *Conn) findTable(name string) uintptr {
	z := cstr(c, name)
	zMain := cstr(c, "main")
	var p uintptr
	if z != 0 && zMain != 0 {
		p = findTable(c.tls, c.db, z, zMain)
	}
	sqlite3.Xsqlite3_free(c.tls, z)
	sqlite3.Xsqlite3_free(c.tls, zMain)
	return p
}

// cstr copies s to C memory with a terminating NUL (0 when out of memory).
func cstr(c *Conn, s string) uintptr {
	z := sqlite3.Xsqlite3_malloc64(c.tls, uint64(len(s)+1))
	if z == 0 {
		return 0
	}
	b := bytesAt(z, len(s)+1)
	copy(b, s)
	b[len(s)] = 0
	return z
}

// shape checks that Table* p is a WITHOUT ROWID table of cols columns and
// returns its root page (0: no), and its triggers' names.
func shape(p uintptr, cols int) (sqlite3.TPgno, []string) {
	if p == 0 {
		return 0, nil
	}
	tab := (*sqlite3.TTable)(cptr(p))
	if tab.FtabFlags&tfWithoutRowid == 0 || tab.FeTabType != tabTypNorm || int(tab.FnCol) != cols || tab.Ftnum <= 1 {
		return 0, nil
	}
	var trig []string
	for t := tab.FpTrigger; t != 0; t = (*sqlite3.TTrigger)(cptr(t)).FpNext {
		trig = append(trig, libc.GoString((*sqlite3.TTrigger)(cptr(t)).FzName))
	}
	return tab.Ftnum, trig
}

// resolve finds t's tables in the current schema (cached for it) and says
// whether the fast path may use them: the data table of the expected shape
// with no trigger but t's own, and either no TTL state at all or the whole
// format-2 TTL state (both tables, all three triggers).
func (c *Conn) resolve(t *Table) resolved {
	if t == c.last && c.last != nil {
		return c.lastR
	}
	if r, ok := c.tables[t.Data]; ok {
		c.last, c.lastR = t, r
		return r
	}
	var r resolved
	cols := 2
	if t.Crc {
		cols = 3
	}
	root, trig := shape(c.findTable(t.Data), cols)
	nTTL, foreign := 0, false
	for _, name := range trig {
		switch name {
		case t.CrcTrigger:
		case t.TTLTriggers[0], t.TTLTriggers[1], t.TTLTriggers[2]:
			nTTL++
		default:
			foreign = true
		}
	}
	keys, expiry := c.findTable(t.Keys), c.findTable(t.Expiry)
	switch {
	case root == 0 || foreign:
	case keys == 0 && expiry == 0 && nTTL == 0:
		r = resolved{ok: true, data: root}
	case keys != 0 && expiry != 0 && nTTL == 3 && t.V2 && t.Crc:
		kroot, ktrig := shape(keys, 3)
		eroot, etrig := shape(expiry, 2)
		if kroot != 0 && eroot != 0 && len(ktrig) == 0 && len(etrig) == 0 {
			r = resolved{ok: true, ttl: true, data: root, keys: kroot, expiry: eroot}
		}
	}
	if c.tables == nil {
		c.tables = make(map[string]resolved)
	}
	c.tables[t.Data] = r
	c.last, c.lastR = t, r
	return r
}

// begin checks that a write may go below SQL now and resolves t.
func (c *Conn) begin(t *Table) (uintptr, resolved, bool) {
	if !c.init() {
		return 0, resolved{}, false
	}
	bt, ok := c.writable()
	if !ok {
		return 0, resolved{}, false
	}
	r := c.resolve(t)
	return bt, r, r.ok
}

// cursor opens write cursor i on root page root, or keeps the one a
// previous call left open there.
func (c *Conn) cursor(bt uintptr, i int, root sqlite3.TPgno, keyInfo uintptr) int32 {
	if c.open[i] {
		if c.openRoot[i] == root && c.openKI[i] == keyInfo {
			return sqlite3.SQLITE_OK
		}
		btreeCloseCursor(c.tls, c.cur[i])
		c.open[i] = false
	}
	btreeCursorZero(c.tls, c.cur[i])
	rc := btreeCursor(c.tls, bt, root, btreeWrCsr, keyInfo, c.cur[i])
	c.open[i] = rc == sqlite3.SQLITE_OK
	c.openRoot[i], c.openKI[i] = root, keyInfo
	return rc
}

// closeCursors closes the cursors calls left open.
func (c *Conn) closeCursors() {
	for i, o := range c.open {
		if o {
			btreeCloseCursor(c.tls, c.cur[i])
			c.open[i] = false
		}
	}
}

// Release closes the write cursors the fast path keeps open between
// calls. The connection calls it before every SQL statement it runs (a
// statement may drop or clear a table, and COMMIT and ROLLBACK end the
// transaction the cursors belong to), so that they live only across a
// run of fast-path calls.
func (c *Conn) Release() { c.closeCursors() }

// end frees oversized buffers and turns rc into the call's error; a
// failed call closes its cursors.
func (c *Conn) end(rc int32) error {
	c.shrink()
	if rc != sqlite3.SQLITE_OK {
		c.closeCursors()
		return &Error{Code: int(rc)}
	}
	return nil
}

// setMem points Mem i at n bytes at p (C memory), as a BLOB.
func (c *Conn) setMem(i int, p uintptr, n int) {
	m := (*sqlite3.TMem)(cptr(c.mem + uintptr(i)*unsafe.Sizeof(sqlite3.TMem{})))
	*m = sqlite3.TMem{}
	m.Fz = p
	m.Fn = int32(n)
	m.Fflags = memBlob
	m.Fenc = encUTF8
	m.Fdb = c.db
}

// seek positions cursor i on the row whose first len(fields) fields equal
// fields (BLOBs), and reports whether there is one (see seekOn).
func (c *Conn) seek(i int, keyInfo uintptr, fields ...[]byte) (found bool, rc int32) {
	found, _, rc = c.seekOn(c.cur[i], keyInfo, fields...)
	return found, rc
}

// seekOn positions cursor cur on the row whose first len(fields) fields
// equal fields (BLOBs), and reports whether there is one; res is the
// cursor's position relative to them otherwise (<0: on a smaller row, >0:
// on a larger one; an empty tree leaves the cursor at its end).
func (c *Conn) seekOn(cur, keyInfo uintptr, fields ...[]byte) (found bool, res int32, rc int32) {
	n := 0
	for _, f := range fields {
		n += len(f)
	}
	p, rc := c.grow(&c.kbuf, n)
	if rc != sqlite3.SQLITE_OK {
		return false, 0, rc
	}
	off := 0
	for j, f := range fields {
		copy(bytesAt(p+uintptr(off), len(f)), f)
		c.setMem(j, p+uintptr(off), len(f))
		off += len(f)
	}
	r := (*sqlite3.TUnpackedRecord)(cptr(c.unpacked))
	*r = sqlite3.TUnpackedRecord{}
	r.FpKeyInfo = keyInfo
	r.FaMem = c.mem
	r.FnField = sqlite3.Tu16(len(fields))
	*(*int32)(cptr(c.out)) = 0
	rc = btreeIndexMoveto(c.tls, cur, c.unpacked, c.out)
	res = *(*int32)(cptr(c.out))
	if rc != sqlite3.SQLITE_OK {
		return false, 0, rc
	}
	return res == 0 && btreeEof(c.tls, cur) == 0, res, rc
}

// putRow writes the record of (a, b[, crc]) through cursor i, built
// straight in C memory, replacing the row whose first keyFields fields (1:
// a; 2: a and b) are equal.
func (c *Conn) putRow(i int, a, b []byte, crc int64, withCrc bool, keyFields int) int32 {
	n := RecordSize(a, b, crc, withCrc)
	p, rc := c.grow(&c.buf, n)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	off := PutRecord(bytesAt(p, n), a, b, crc, withCrc)
	c.setMem(0, p+uintptr(off), len(a))
	if keyFields == 2 {
		c.setMem(1, p+uintptr(off+len(a)), len(b))
	}
	x := (*sqlite3.TBtreePayload)(cptr(c.payload))
	*x = sqlite3.TBtreePayload{}
	x.FpKey = p
	x.FnKey = int64(n)
	x.FaMem = c.mem
	x.FnMem = sqlite3.Tu16(keyFields)
	return btreeInsert(c.tls, c.cur[i], c.payload, 0, 0)
}

// upsertData writes the data row (key, value, crc) through cursor curData.
func (c *Conn) upsertData(t *Table, key, value []byte, crc int64) int32 {
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
func (c *Conn) Upsert(t *Table, key, value []byte, crc int64) (ok bool, err error) {
	bt, r, ok := c.begin(t)
	if !ok {
		return false, nil
	}
	rc := c.cursor(bt, curData, r.data, c.keyInfo1)
	if rc == sqlite3.SQLITE_OK && r.ttl {
		rc = c.clearTTL(bt, r, key)
	}
	if rc == sqlite3.SQLITE_OK {
		rc = c.upsertData(t, key, value, crc)
	}
	return true, c.end(rc)
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
	return c.dropTTL(bt, r, key, true)
}

// dropTTL removes key's expiry index row and, with keysRow set, its key
// index row (PutTTL replaces that one in place instead).
func (c *Conn) dropTTL(bt uintptr, r resolved, key []byte, keysRow bool) int32 {
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
	if keysRow {
		if rc := btreeDelete(c.tls, c.cur[curKeys], 0); rc != sqlite3.SQLITE_OK {
			return rc
		}
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

// row returns the record under write cursor i (see readRow).
func (c *Conn) row(i int) ([]byte, int32) { return c.readRow(c.cur[i], &c.buf) }

// readRow returns the record under cursor cur: on its page when it fits,
// or copied whole out of its overflow pages into buf.
func (c *Conn) readRow(cur uintptr, buf *cbuf) ([]byte, int32) {
	size := int(btreePayloadSize(c.tls, cur))
	p := btreePayloadFetch(c.tls, cur, c.out)
	if local := int(*(*uint32)(cptr(c.out))); p != 0 && local >= size {
		return bytesAt(p, size), sqlite3.SQLITE_OK
	}
	q, rc := c.grow(buf, size)
	if rc != sqlite3.SQLITE_OK {
		return nil, rc
	}
	if rc := btreePayload(c.tls, cur, 0, sqlite3.Tu32(size), q); rc != sqlite3.SQLITE_OK {
		return nil, rc
	}
	return bytesAt(q, size), sqlite3.SQLITE_OK
}

// Delete removes the row of key from t's data table, as
// DELETE FROM data WHERE key = ? does (the TTL triggers' effect included),
// and reports whether there was one. A column family with TTL tables is
// done below SQL only with withTTL set: a caller whose delete depends on
// the key's expiry runs SQL. ok and err are as Upsert's.
func (c *Conn) Delete(t *Table, key []byte, withTTL bool) (ok, found bool, err error) {
	bt, r, ok := c.begin(t)
	if !ok || r.ttl && !withTTL {
		return false, false, nil
	}
	rc := c.cursor(bt, curData, r.data, c.keyInfo1)
	if rc == sqlite3.SQLITE_OK {
		found, rc = c.seek(curData, c.keyInfo1, key)
	}
	if rc == sqlite3.SQLITE_OK && found {
		rc = btreeDelete(c.tls, c.cur[curData], 0)
		if rc == sqlite3.SQLITE_OK && r.ttl {
			rc = c.clearTTL(bt, r, key)
		}
	}
	return true, found, c.end(rc)
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
func (c *Conn) PutTTL(t *Table, key, value []byte, crc int64, exp []byte, keyCrc int64) (ok bool, err error) {
	bt, r, ok := c.begin(t)
	if !ok || !r.ttl {
		return false, nil
	}
	rc := c.cursor(bt, curData, r.data, c.keyInfo1)
	if rc == sqlite3.SQLITE_OK {
		// The old expiry row goes; the key index row is replaced below.
		rc = c.dropTTL(bt, r, key, false)
	}
	if rc == sqlite3.SQLITE_OK {
		rc = c.upsertData(t, key, value, crc)
	}
	if rc == sqlite3.SQLITE_OK {
		rc = c.putRow(curKeys, key, exp, keyCrc, true, 1) // (key, expire_ms, crc)
	}
	if rc == sqlite3.SQLITE_OK {
		rc = c.putRow(curExpiry, exp, key, 0, false, 2) // (expire_ms, key)
	}
	return true, c.end(rc)
}

// Purge deletes up to limit keys whose expiry index entry sorts below hi,
// in index order, as the set-based SQL purge does: a data row goes (and
// its key index row with it) only when its key index row agrees with the
// expiry entry that names it, and every expiry entry in the range goes.
// n counts the data rows deleted; more reports that the limit stopped it
// at an expired entry. ok and err are as Upsert's.
func (c *Conn) Purge(t *Table, hi []byte, limit int) (ok bool, n int, more bool, err error) {
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
		if found, rc = c.seek(curKeys, c.keyInfo1, key); rc == sqlite3.SQLITE_OK && found {
			rc = btreeDelete(c.tls, c.cur[curKeys], 0)
		}
	}
	return true, n, more, c.end(rc)
}

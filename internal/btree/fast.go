//go:build !snkv_nofast

package btree

import (
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

// maxCachedBuf: a record buffer grown past it is freed after the write.
const maxCachedBuf = 64 << 10

// Conn is the fast path of one SQLite connection. Like the connection, it
// is used by one goroutine at a time.
type Conn struct {
	tls *libc.TLS
	db  uintptr // sqlite3*

	// C memory the calls share: a cursor, the payload descriptor, the key's
	// Mem, a 4-byte out value, and the record buffer.
	cur, payload, mem, out, unpacked uintptr
	keyInfo                          uintptr
	buf                              uintptr
	bufN                             int
	rec                              []byte // Go-side record, reused

	// tables caches what lookup and exists found, for one schema: its
	// generation (a reload from the file makes a new one) and its cookie
	// (a change this connection makes itself keeps the generation).
	gen, cookie int32
	tables      map[string]table
}

// table is what the fast path knows of one table in one schema generation.
type table struct {
	root sqlite3.TPgno
	ok   bool // a WITHOUT ROWID table of the expected shape, no foreign trigger
}

// New returns the fast path of the connection db (a sqlite3*), which tls
// serves. Close it before the connection.
func New(tls *libc.TLS, db uintptr) *Conn {
	return &Conn{tls: tls, db: db, gen: -1}
}

// Close frees the C memory the fast path holds.
func (c *Conn) Close() {
	for _, p := range []*uintptr{&c.cur, &c.payload, &c.mem, &c.out, &c.unpacked, &c.buf} {
		if *p != 0 {
			sqlite3.Xsqlite3_free(c.tls, *p)
			*p = 0
		}
	}
	if c.keyInfo != 0 {
		keyInfoUnref(c.tls, c.keyInfo)
		c.keyInfo = 0
	}
	c.bufN = 0
}

func cptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// init allocates the C memory the calls share.
func (c *Conn) init() bool {
	if c.cur != 0 {
		return true
	}
	alloc := func(n int) uintptr {
		p := sqlite3.Xsqlite3_malloc64(c.tls, uint64(n))
		if p != 0 {
			clear(unsafe.Slice((*byte)(cptr(p)), n))
		}
		return p
	}
	c.cur = alloc(int(btreeCursorSize(c.tls)))
	c.payload = alloc(int(unsafe.Sizeof(sqlite3.TBtreePayload{})))
	c.mem = alloc(int(unsafe.Sizeof(sqlite3.TMem{})))
	c.out = alloc(8)
	c.unpacked = alloc(int(unsafe.Sizeof(sqlite3.TUnpackedRecord{})))
	c.keyInfo = keyInfoAlloc(c.tls, c.db, 1, 2)
	if c.cur == 0 || c.payload == 0 || c.mem == 0 || c.out == 0 || c.unpacked == 0 || c.keyInfo == 0 {
		c.Close()
		return false
	}
	return true
}

// mainDb returns the main database's Btree* and Schema*.
func (c *Conn) mainDb() (bt, schema uintptr) {
	d := (*sqlite3.Tsqlite3)(cptr(c.db))
	main := (*sqlite3.TDb)(cptr(d.FaDb))
	return main.FpBt, main.FpSchema
}

// writable reports whether the connection is in a write transaction on a
// parsed schema that is current, and returns the main Btree*. A schema
// changed by another connection since it was parsed, or not parsed yet,
// means no: the caller's SQL statement reloads it.
func (c *Conn) writable() (uintptr, bool) {
	d := (*sqlite3.Tsqlite3)(cptr(c.db))
	if d.FautoCommit != 0 {
		return 0, false
	}
	bt, sp := c.mainDb()
	if bt == 0 || sp == 0 || btreeTxnState(c.tls, bt) != txnWrite {
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
	c.current(schema)
	return bt, true
}

// lookup returns what the fast path knows of table name in the current
// schema generation, finding it in the parsed schema on first use.
func (c *Conn) lookup(name string, cols int) (table, bool) {
	if t, ok := c.tables[name]; ok {
		return t, t.ok
	}
	var t table
	z := sqlite3.Xsqlite3_malloc64(c.tls, uint64(len(name)+1))
	if z == 0 {
		return t, false
	}
	b := unsafe.Slice((*byte)(cptr(z)), len(name)+1)
	copy(b, name)
	b[len(name)] = 0
	zMain := sqlite3.Xsqlite3_malloc64(c.tls, 5)
	if zMain == 0 {
		sqlite3.Xsqlite3_free(c.tls, z)
		return t, false
	}
	copy(unsafe.Slice((*byte)(cptr(zMain)), 5), "main\x00")
	p := findTable(c.tls, c.db, z, zMain)
	sqlite3.Xsqlite3_free(c.tls, zMain)
	sqlite3.Xsqlite3_free(c.tls, z)
	if p != 0 {
		tab := (*sqlite3.TTable)(cptr(p))
		t.root = tab.Ftnum
		t.ok = tab.FtabFlags&tfWithoutRowid != 0 && tab.FeTabType == tabTypNorm &&
			int(tab.FnCol) == cols && t.root > 1 && onlyOwnTrigger(tab.FpTrigger, name)
	}
	if c.tables == nil {
		c.tables = make(map[string]table)
	}
	c.tables[name] = t
	return t, t.ok
}

// CrcTriggerPrefix is the name prefix of the checksum trigger on a column
// family table: an AFTER UPDATE trigger, which an insert into the B-tree
// does not fire, as the INSERT … ON CONFLICT DO UPDATE of a new value does
// not either (its WHEN clause requires an unchanged checksum).
const CrcTriggerPrefix = "__snkv_crc__"

// onlyOwnTrigger reports whether the triggers of table name (a linked list
// of Trigger*) are at most its checksum trigger. Any other trigger (the TTL
// triggers, or one a user added) means the SQL statement must run.
func onlyOwnTrigger(p uintptr, name string) bool {
	for ; p != 0; p = (*sqlite3.TTrigger)(cptr(p)).FpNext {
		if libc.GoString((*sqlite3.TTrigger)(cptr(p)).FzName) != CrcTriggerPrefix+name {
			return false
		}
	}
	return true
}

// Upsert writes the row (key, value, crc) into the WITHOUT ROWID table
// name, replacing the row of the same key, as
//
//	INSERT INTO name (key, value, crc) VALUES (?, ?, ?)
//	  ON CONFLICT (key) DO UPDATE SET value = excluded.value, crc = excluded.crc
//
// does (without crc for a table of two columns, withCrc unset). ok is
// false when the fast path cannot be used now (see the package comment):
// nothing was done and the caller runs the statement. An error means the
// B-tree may have been changed part way: the caller must roll the whole
// transaction back, as SQLite itself does after an I/O error.
func (c *Conn) Upsert(name string, key, value []byte, crc int64, withCrc bool) (ok bool, err error) {
	if !c.init() {
		return false, nil
	}
	bt, ok := c.writable()
	if !ok {
		return false, nil
	}
	cols := 2
	if withCrc {
		cols = 3
	}
	t, ok := c.lookup(name, cols)
	if !ok {
		return false, nil
	}
	var keyOff int
	c.rec, keyOff = AppendRecord(c.rec[:0], key, value, crc, withCrc)
	p, err := c.record(len(c.rec))
	if err != nil {
		return true, err
	}
	copy(unsafe.Slice((*byte)(cptr(p)), len(c.rec)), c.rec)

	c.keyMem(p+uintptr(keyOff), len(key))
	x := (*sqlite3.TBtreePayload)(cptr(c.payload))
	*x = sqlite3.TBtreePayload{}
	x.FpKey = p
	x.FnKey = int64(len(c.rec))
	x.FaMem = c.mem
	x.FnMem = 1

	btreeCursorZero(c.tls, c.cur)
	if rc := btreeCursor(c.tls, bt, t.root, btreeWrCsr, c.keyInfo, c.cur); rc != sqlite3.SQLITE_OK {
		return true, c.err(rc)
	}
	rc := btreeInsert(c.tls, c.cur, c.payload, 0, 0)
	btreeCloseCursor(c.tls, c.cur)
	c.releaseBuf()
	if rc != sqlite3.SQLITE_OK {
		return true, c.err(rc)
	}
	return true, nil
}

// record returns C memory of at least n bytes for a record.
func (c *Conn) record(n int) (uintptr, error) {
	if n > c.bufN {
		p := sqlite3.Xsqlite3_realloc64(c.tls, c.buf, uint64(max(n, 2*c.bufN, 256)))
		if p == 0 {
			return 0, &Error{Code: sqlite3.SQLITE_NOMEM}
		}
		c.buf, c.bufN = p, max(n, 2*c.bufN, 256)
	}
	return c.buf, nil
}

// releaseBuf frees a record buffer grown past maxCachedBuf, so that one
// large value does not pin its size for the connection's life.
func (c *Conn) releaseBuf() {
	if c.bufN > maxCachedBuf {
		sqlite3.Xsqlite3_free(c.tls, c.buf)
		c.buf, c.bufN = 0, 0
		c.rec = nil
	}
}

func (c *Conn) err(rc int32) error { return &Error{Code: int(rc)} }

// keyMem points the shared Mem at n bytes of key at p (C memory), as a
// BLOB: the one field a look-up compares.
func (c *Conn) keyMem(p uintptr, n int) {
	m := (*sqlite3.TMem)(cptr(c.mem))
	*m = sqlite3.TMem{}
	m.Fz = p
	m.Fn = int32(n)
	m.Fflags = memBlob
	m.Fenc = encUTF8
	m.Fdb = c.db
}

// Delete removes the row of key from the WITHOUT ROWID table name, as
// DELETE FROM name WHERE key = ? does, and reports whether there was one.
// ok and err are as Upsert's.
func (c *Conn) Delete(name string, key []byte, withCrc bool) (ok, found bool, err error) {
	if !c.init() {
		return false, false, nil
	}
	bt, ok := c.writable()
	if !ok {
		return false, false, nil
	}
	cols := 2
	if withCrc {
		cols = 3
	}
	t, ok := c.lookup(name, cols)
	if !ok {
		return false, false, nil
	}
	p, err := c.record(len(key))
	if err != nil {
		return true, false, err
	}
	copy(unsafe.Slice((*byte)(cptr(p)), len(key)), key)
	c.keyMem(p, len(key))
	r := (*sqlite3.TUnpackedRecord)(cptr(c.unpacked))
	*r = sqlite3.TUnpackedRecord{}
	r.FpKeyInfo = c.keyInfo
	r.FaMem = c.mem
	r.FnField = 1

	btreeCursorZero(c.tls, c.cur)
	if rc := btreeCursor(c.tls, bt, t.root, btreeWrCsr, c.keyInfo, c.cur); rc != sqlite3.SQLITE_OK {
		return true, false, c.err(rc)
	}
	*(*int32)(cptr(c.out)) = 1
	rc := btreeIndexMoveto(c.tls, c.cur, c.unpacked, c.out)
	if rc == sqlite3.SQLITE_OK && *(*int32)(cptr(c.out)) == 0 {
		found = true
		rc = btreeDelete(c.tls, c.cur, 0)
	}
	btreeCloseCursor(c.tls, c.cur)
	c.releaseBuf()
	if rc != sqlite3.SQLITE_OK {
		return true, false, c.err(rc)
	}
	return true, found, nil
}

// current empties the table cache when the schema is not the one it was
// filled for.
func (c *Conn) current(schema *sqlite3.TSchema) {
	if schema.FiGeneration != c.gen || schema.Fschema_cookie != c.cookie {
		clear(c.tables)
		c.gen, c.cookie = schema.FiGeneration, schema.Fschema_cookie
	}
}

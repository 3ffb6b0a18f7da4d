//go:build !snkv_nofast

package btree

import (
	"unsafe"

	"github.com/snkv-go/snkv/internal/layout"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// Enabled reports whether the fast path is built in.
const Enabled = true

// SQLite's internal constants, as the library defines them.
const (
	tfWithoutRowid    = sqlite3.TF_WithoutRowid
	tabTypNorm        = sqlite3.TABTYP_NORM
	dbSchemaLoaded    = sqlite3.DB_SchemaLoaded
	txnWrite          = sqlite3.SQLITE_TXN_WRITE
	btreeWrCsr        = sqlite3.BTREE_WRCSR
	metaSchemaVer     = sqlite3.BTREE_SCHEMA_VERSION
	memBlob           = sqlite3.MEM_Blob
	encUTF8           = sqlite3.SQLITE_UTF8
	cursorValid       = sqlite3.CURSOR_VALID
	btreeBulkLoad     = sqlite3.BTREE_BULKLOAD
	btreeSavePosition = sqlite3.BTREE_SAVEPOSITION
)

// maxCachedBuf: a buffer grown past it is freed after the call.
const maxCachedBuf = 64 << 10

// The write cursors a call may hold at once, one per table.
const (
	curData = iota
	curKeys
	curExpiry
	curLog // the change log (AppendChange)
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
	openFlags              [nCursors]int32
	payload, mem, unpacked uintptr
	out                    uintptr
	keyInfo1, keyInfo2     uintptr // one key field (data, keys), two (expiry)
	buf, kbuf              cbuf
	oldExp                 [8]byte
	copyBuf                [layout.CopyLen]byte // the expiry copy PutTTL writes
	// pend is the index rows of PutTTL calls not written yet (pending.go).
	pend pendingTTL
	// lens is ExpiredHead's scratch: each entry's expiry and key lengths.
	lens []int32
	// A point read's row (Lookup): the view's five columns, and a buffer
	// for a key index row that spills to overflow pages (buf holds a data
	// row's).
	view ViewRow
	ibuf cbuf
	// hp is the pages a point read keeps for the read transaction
	// (interior.go).
	hp heldPages

	// held is the transaction state inTx found in the current explicit
	// transaction (0: none checked since the last SQL statement), and
	// heldBt the main Btree* then.
	held   int32
	heldBt uintptr

	// tables caches what resolve found, for one schema: its generation (a
	// reload from the file makes a new one) and its cookie (a change this
	// connection makes itself keeps the generation).
	gen, cookie int32
	tables      map[string]resolved
	last        *layout.Objects // the objects resolve saw last, and what it found
	lastR       resolved

	// scanCur and scanOut are the cursor and out value of the last Scan
	// closed, kept for the next (0: none).
	scanCur, scanOut uintptr

	// logSeq is the sequence the change log cursor is on after the
	// append that wrote it (AppendChange; 0: unknown).
	logSeq int64
	// logName's root page (0: not the change log's shape) in the schema
	// of generation logGen and cookie logCookie (changeLog).
	logName           string
	logRoot           sqlite3.TPgno
	logGen, logCookie int32
}

// resolved is what the fast path found of a column family's objects in one schema.
type resolved struct {
	ok                 bool // the fast path may read and write it
	ttl                bool // its TTL tables and triggers exist
	copy               bool // its data table has the expiry copy and its triggers (layout.CopyColumn)
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
	for _, p := range []*uintptr{&c.cur[0], &c.cur[1], &c.cur[2], &c.cur[3], &c.payload, &c.mem, &c.out, &c.unpacked, &c.buf.p, &c.kbuf.p, &c.ibuf.p, &c.scanCur, &c.scanOut} {
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
	c.buf.n, c.kbuf.n, c.ibuf.n = 0, 0, 0
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
	for _, b := range []*cbuf{&c.buf, &c.kbuf, &c.ibuf} {
		if b.n > maxCachedBuf {
			sqlite3.Xsqlite3_free(c.tls, b.p)
			*b = cbuf{}
		}
	}
}

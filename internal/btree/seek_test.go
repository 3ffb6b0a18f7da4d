//go:build !snkv_nofast

package btree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/snkv-go/snkv/internal/layout"
	"github.com/stretchr/testify/require"
	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// rawDB is a connection opened with SQLite's C API, for the tests that
// compare this package's seek with SQLite's on the same cursor state.
type rawDB struct {
	t   *testing.T
	tls *libc.TLS
	db  uintptr
}

func openRaw(t *testing.T) *rawDB { return openRawAt(t, filepath.Join(t.TempDir(), "seek.db")) }

// openRawAt is openRaw of the database file at file.
func openRawAt(t *testing.T, file string) *rawDB {
	tls := libc.NewTLS()
	path, err := libc.CString(file)
	require.NoError(t, err)
	defer libc.Xfree(tls, path)
	pp := sqlite3.Xsqlite3_malloc(tls, 8)
	defer sqlite3.Xsqlite3_free(tls, pp)
	rc := sqlite3.Xsqlite3_open_v2(tls, path, pp, sqlite3.SQLITE_OPEN_READWRITE|sqlite3.SQLITE_OPEN_CREATE, 0)
	require.Equal(t, int32(sqlite3.SQLITE_OK), rc)
	r := &rawDB{t: t, tls: tls, db: *(*uintptr)(cptr(pp))}
	t.Cleanup(func() {
		sqlite3.Xsqlite3_close_v2(tls, r.db)
		tls.Close()
	})
	return r
}

// beginWrite opens the below-SQL connection on r's database and begins a
// write transaction there, rolled back when the test ends; it returns the
// connection and its B-tree.
func beginWrite(t *testing.T, r *rawDB) (*Conn, uintptr) {
	t.Helper()
	c := New(r.tls, r.db)
	t.Cleanup(c.Close)
	r.exec("BEGIN IMMEDIATE")
	t.Cleanup(func() { r.exec("ROLLBACK") })
	require.True(t, c.init())
	bt, ok := c.writable()
	require.True(t, ok)
	return c, bt
}

func (r *rawDB) exec(sql string) {
	z, err := libc.CString(sql)
	require.NoError(r.t, err)
	defer libc.Xfree(r.tls, z)
	require.Equal(r.t, int32(sqlite3.SQLITE_OK), sqlite3.Xsqlite3_exec(r.tls, r.db, z, 0, 0, 0), sql)
}

// insert adds a row whose key columns are BLOBs given as hex (literals
// keep the test free of bound parameters).
func (r *rawDB) insert(table string, cols ...string) {
	sql := "INSERT OR IGNORE INTO " + table + " VALUES ("
	for i, c := range cols {
		if i > 0 {
			sql += ", "
		}
		sql += c
	}
	r.exec(sql + ")")
}

func blobLit(b []byte) string { return fmt.Sprintf("x'%x'", b) }

// cursorState is where a seek left a cursor: its depth, the page and cell
// index at every level, its state and its flags.
type cursorState struct {
	state uint8
	flags uint8
	depth int8
	pages []uint32
	idx   []uint16
}

func stateOf(cur uintptr) cursorState {
	bc := (*sqlite3.TBtCursor)(cptr(cur))
	s := cursorState{state: bc.FeState, flags: bc.FcurFlags, depth: bc.FiPage}
	for i := 0; i < int(bc.FiPage); i++ {
		s.pages = append(s.pages, (*sqlite3.TMemPage)(cptr(bc.FapPage[i])).Fpgno)
		s.idx = append(s.idx, bc.FaiIdx[i])
	}
	if bc.FiPage >= 0 && bc.FpPage != 0 {
		s.pages = append(s.pages, (*sqlite3.TMemPage)(cptr(bc.FpPage)).Fpgno)
		s.idx = append(s.idx, bc.Fix)
	}
	return s
}

func sign(v int32) int32 {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}

// seekKeys makes keys that fill several levels of a tree: short ones,
// shared prefixes, and long ones whose cells spill to overflow pages
// (where the Go seek hands over to SQLite's).
// seekTrees makes a data table t and a two-field index table e and, in
// a transaction it leaves open, fills them with 4,000 keys of seekKeys
// drawn from a generator seeded with seed1, seed2 (returned, to draw
// on).
func seekTrees(t *testing.T, seed1, seed2 uint64) (*rawDB, *rand.Rand, [][]byte) {
	r := openRaw(t)
	r.exec(`CREATE TABLE t (key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID;
		CREATE TABLE e (a BLOB NOT NULL, b BLOB NOT NULL, PRIMARY KEY (a, b)) WITHOUT ROWID;`)
	rng := rand.New(rand.NewPCG(seed1, seed2))
	keys := seekKeys(rng, 4000)
	r.exec("BEGIN")
	for _, k := range keys {
		r.insert("t", blobLit(k), blobLit(fmt.Appendf(nil, "v%d", rng.IntN(100))))
		r.insert("e", blobLit(k[:min(len(k), 3)]), blobLit(k))
	}
	return r, rng, keys
}

func seekKeys(rng *rand.Rand, n int) [][]byte {
	keys := make([][]byte, 0, n)
	for range n {
		var k []byte
		switch rng.IntN(40) {
		case 0:
			k = append([]byte("long/"), bytes.Repeat([]byte{byte(rng.IntN(256))}, 500+rng.IntN(2500))...)
		case 1:
			k = []byte{byte(rng.IntN(256))}
		case 2, 3:
			k = fmt.Appendf(nil, "prefix/%d", rng.IntN(1000))
		default:
			k = fmt.Appendf(nil, "k%08d%x", rng.IntN(1_000_000), rng.Uint32()&0xff)
		}
		keys = append(keys, k)
	}
	return keys
}

// probes are the keys a seek is tried with: every stored key, and around
// each a key just before, just after and a prefix of it.
func probes(keys [][]byte, rng *rand.Rand) [][]byte {
	var ps [][]byte
	for _, k := range keys {
		ps = append(ps, k, append(bytes.Clone(k), 0), k[:len(k)-1])
		if len(k) > 0 {
			d := bytes.Clone(k)
			d[len(d)-1]--
			ps = append(ps, d)
		}
	}
	for range 200 {
		ps = append(ps, fmt.Appendf(nil, "%x", rng.Uint64()))
	}
	// The lowest keys, beside the rows that are not BLOBs.
	return append(ps, []byte{}, []byte{0}, []byte{1}, []byte("text key"), []byte{0xff, 0xff, 0xff})
}

// The Go seek leaves a cursor exactly where SQLite's own leaves it, with
// the same result, for one- and two-field search keys, on trees of
// several levels with overflowing cells and with keys of other storage
// classes (a table without STRICT, as version-1 files have): the same
// page and cell at every level, the same state.
func TestSeekIndexMatchesSQLite(t *testing.T) {
	r, rng, keys := seekTrees(t, 28, 2)
	// Keys that are not BLOBs sort before every BLOB.
	for _, k := range []string{"'text key'", "'a'", "'zzz'", "''"} {
		r.insert("t", k, "x'00'")
		r.insert("e", k, "x'01'")
	}
	r.insert("t", "42", "x'00'")
	r.insert("t", "1.5", "x'00'")
	r.insert("e", "x'6b30'", "7")
	r.exec("COMMIT")

	c, bt := beginWrite(t, r)

	check := func(table string, keyInfo uintptr, probe func(k []byte) [][]byte) {
		res := c.resolve(&layout.Objects{Names: layout.Names{Data: table}})
		require.True(t, res.ok, table)
		for _, i := range []int{curData, curKeys} {
			require.Equal(t, int32(sqlite3.SQLITE_OK), c.cursorFor(bt, i, res.data, keyInfo, btreeWrCsr))
		}
		goCur, sqlCur := c.cur[curData], c.cur[curKeys]
		fallbacks, n := 0, 0
		for _, k := range probes(keys, rng) {
			n++
			fields := probe(k)
			goSeek = true
			_, _, goOK := c.seekIndex(goCur, fields)
			if !goOK {
				fallbacks++
			}
			gFound, gRes, gRC := c.seekOn(goCur, keyInfo, fields...)
			goSeek = false
			sFound, sRes, sRC := c.seekOn(sqlCur, keyInfo, fields...)
			goSeek = true
			require.Equal(t, sRC, gRC, "%s %x", table, fields)
			require.Equal(t, sFound, gFound, "%s %x", table, fields)
			require.Equal(t, sign(sRes), sign(gRes), "%s %x", table, fields)
			require.Equal(t, stateOf(sqlCur), stateOf(goCur), "%s %x", table, fields)
		}
		require.Positive(t, fallbacks, "%s: some seeks met overflowing cells and went to SQLite", table)
		require.Less(t, fallbacks, n/4, "%s: most seeks were made in Go", table)
	}
	check("t", c.keyInfo1, func(k []byte) [][]byte { return [][]byte{k} })
	check("e", c.keyInfo2, func(k []byte) [][]byte { return [][]byte{k[:min(len(k), 3)], k} })
	check("e", c.keyInfo1, func(k []byte) [][]byte { return [][]byte{k[:min(len(k), 3)]} })
}

// compareRecord orders a record as SQLite's comparator does: by the bytes
// of each BLOB field, shorter first on a common prefix, any other storage
// class first, and reports records it cannot read.
func TestCompareRecord(t *testing.T) {
	rec := func(fields ...[]byte) []byte {
		var hdr, body []byte
		for _, f := range fields {
			hdr = append(hdr, make([]byte, varintLen(uint64(len(f))*2+12))...)
			putVarint(hdr[len(hdr)-varintLen(uint64(len(f))*2+12):], uint64(len(f))*2+12)
			body = append(body, f...)
		}
		return append(append([]byte{byte(len(hdr) + 1)}, hdr...), body...)
	}
	for _, c := range []struct {
		rec    []byte
		key    [][]byte
		cmp    int
		broken bool
	}{
		{rec: rec([]byte("abc")), key: [][]byte{[]byte("abc")}, cmp: 0},
		{rec: rec([]byte("abc")), key: [][]byte{[]byte("abd")}, cmp: -1},
		{rec: rec([]byte("abc")), key: [][]byte{[]byte("ab")}, cmp: 1},
		{rec: rec([]byte("ab")), key: [][]byte{[]byte("abc")}, cmp: -1},
		{rec: rec([]byte{}), key: [][]byte{{}}, cmp: 0},
		{rec: rec([]byte("a"), []byte("b")), key: [][]byte{[]byte("a"), []byte("c")}, cmp: -1},
		{rec: rec([]byte("a"), []byte("b")), key: [][]byte{[]byte("a")}, cmp: 0},
		{rec: rec(bytes.Repeat([]byte("x"), 300)), key: [][]byte{bytes.Repeat([]byte("x"), 300)}, cmp: 0},
		{rec: []byte{2, 1, 7}, key: [][]byte{[]byte("a")}, cmp: -1},         // an integer
		{rec: []byte{2, 15, 'a'}, key: [][]byte{[]byte("a")}, cmp: -1},      // TEXT
		{rec: []byte{2, 0}, key: [][]byte{[]byte("a")}, cmp: -1},            // NULL
		{rec: []byte{2, 20, 'a'}, key: [][]byte{[]byte("a")}, broken: true}, // body past the end
		{rec: []byte{9, 14}, key: [][]byte{[]byte("a")}, broken: true},      // header past the end
		{rec: []byte{}, key: [][]byte{[]byte("a")}, broken: true},
	} {
		cmp, good := compareRecord(c.rec, c.key)
		require.Equal(t, !c.broken, good, "%x", c.rec)
		if good {
			require.Equal(t, c.cmp, max(-1, min(1, cmp)), "%x against %q", c.rec, c.key)
		}
	}
}

// pageFetches returns the pages the connection has fetched from its cache
// or the file since the last call.
func (r *rawDB) pageFetches() int {
	p := sqlite3.Xsqlite3_malloc(r.tls, 8)
	defer sqlite3.Xsqlite3_free(r.tls, p)
	n := 0
	for _, op := range []int32{sqlite3.SQLITE_DBSTATUS_CACHE_HIT, sqlite3.SQLITE_DBSTATUS_CACHE_MISS} {
		require.Equal(r.t, int32(sqlite3.SQLITE_OK), sqlite3.Xsqlite3_db_status(r.tls, r.db, op, p, p+4, 1))
		n += int(*(*int32)(cptr(p)))
	}
	return n
}

// Replacing a row's value reads the pages of its path once: the seek that
// found the row is the one the insert uses (SQLite seeks again unless told
// the cursor is on the row to replace).
func TestOverwriteSeeksOnce(t *testing.T) {
	r := openRaw(t)
	r.exec(`CREATE TABLE t (key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID`)
	value := func(i int) []byte { return fmt.Appendf(nil, "%0100d", i) }
	r.exec("BEGIN")
	for i := range 30_000 {
		r.insert("t", blobLit(fmt.Appendf(nil, "key%06d", i)), blobLit(value(i)))
	}
	r.exec("COMMIT")
	c, _ := beginWrite(t, r)
	tbl := &layout.Objects{Names: layout.Names{Data: "t"}}
	// The smallest key is on the leftmost leaf: its depth is the tree's.
	ok, err := c.Upsert(tbl, []byte("key000000"), value(0), 0)
	require.NoError(t, err)
	require.True(t, ok)
	depth := int((*sqlite3.TBtCursor)(cptr(c.cur[curData])).FiPage) + 1
	require.Equal(t, 3, depth, "a tree of three levels")
	rng := rand.New(rand.NewPCG(3, 28))
	for n := range 200 {
		i := rng.IntN(30_000)
		r.pageFetches()
		ok, err := c.Upsert(tbl, fmt.Appendf(nil, "key%06d", i), value(i+n+1), 0)
		require.NoError(t, err)
		require.True(t, ok)
		require.LessOrEqual(t, r.pageFetches(), depth, "key %d: one fetch per level", i)
	}
}

// TestCompareKeysIsBytesCompare checks compareKeys against bytes.Compare on
// keys of every length up to 24 that share prefixes of every length.
func TestCompareKeysIsBytesCompare(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	sign := func(c int) int { return min(max(c, -1), 1) }
	for range 200000 {
		a := make([]byte, r.IntN(25))
		for i := range a {
			a[i] = byte(r.IntN(3) * 127) // 0, 127, 254: many ties
		}
		b := append([]byte(nil), a[:r.IntN(len(a)+1)]...)
		for range r.IntN(25 - len(b)) {
			b = append(b, byte(r.IntN(3)*127))
		}
		require.Equal(t, sign(bytes.Compare(a, b)), sign(compareKeys(a, b)), "%x vs %x", a, b)
	}
}

// From a cursor on the last leaf of the tree (where a run of appends
// leaves it), the Go seek takes SQLite's shortcut the way SQLite does: on
// the last row, a key at or after it does not move the cursor; a key
// from the leaf's first row on is searched for on that leaf; any other
// starts from the root. Both leave the cursor in the same state with the
// same result.
func TestSeekIndexFromLastLeafMatchesSQLite(t *testing.T) {
	r := openRaw(t)
	r.exec(`CREATE TABLE t (key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID`)
	key := func(i int) []byte { return fmt.Appendf(nil, "key%06d", i) }
	r.exec("BEGIN")
	for i := range 5000 {
		r.insert("t", blobLit(key(2*i)), blobLit(fmt.Appendf(nil, "%050d", i)))
	}
	r.exec("COMMIT")
	c, bt := beginWrite(t, r)
	res := c.resolve(&layout.Objects{Names: layout.Names{Data: "t"}})
	require.True(t, res.ok)
	for _, i := range []int{curData, curKeys} {
		require.Equal(t, int32(sqlite3.SQLITE_OK), c.cursorFor(bt, i, res.data, c.keyInfo1, btreeWrCsr))
	}
	goCur, sqlCur := c.cur[curData], c.cur[curKeys]
	// Where each case puts both cursors first: the last row, and rows
	// before it on the last leaf.
	starts := [][]byte{key(9998), append(key(9998), 0xff), key(9990), key(9960), key(9900)}
	probes := [][]byte{key(9998), key(9999), key(10_000), append(key(9998), 0), key(9997), key(9990),
		key(9981), key(9960), key(9901), key(9800), key(5000), key(0), {}, {0xff}}
	shortcuts := 0
	for _, start := range starts {
		for _, p := range probes {
			for _, cur := range []uintptr{goCur, sqlCur} {
				goSeek = false
				_, _, rc := c.seekOn(cur, c.keyInfo1, start)
				require.Equal(t, int32(sqlite3.SQLITE_OK), rc)
			}
			goSeek = true
			require.Equal(t, stateOf(sqlCur), stateOf(goCur))
			onLast := cursorOnLastPage(c.tls, goCur) != 0
			r.pageFetches()
			gFound, gRes, gRC := c.seekOn(goCur, c.keyInfo1, p)
			if onLast && r.pageFetches() == 0 {
				shortcuts++
			}
			goSeek = false
			sFound, sRes, sRC := c.seekOn(sqlCur, c.keyInfo1, p)
			goSeek = true
			require.Equal(t, sRC, gRC, "from %s to %x", start, p)
			require.Equal(t, sFound, gFound, "from %s to %x", start, p)
			require.Equal(t, sign(sRes), sign(gRes), "from %s to %x", start, p)
			require.Equal(t, stateOf(sqlCur), stateOf(goCur), "from %s to %x", start, p)
		}
	}
	require.Positive(t, shortcuts, "some seeks stayed on the last leaf")
}

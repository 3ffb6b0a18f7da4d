//go:build !snkv_nofast

package btree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/snkv-go/snkv/internal/layout"
	"github.com/stretchr/testify/require"
	sqlite3 "modernc.org/sqlite/lib"
)

// A point read in a held read transaction finds what SQLite's own seek
// finds on the same snapshot, through the interior pages it keeps, while
// another connection commits and copies the WAL into the file, and this
// one ends its transactions, writes and reads again: the database file
// mapped and not, pages read from the WAL and from the file, rows on
// overflow pages (handed to the cursor). Every page it held is released
// before the transaction ends: afterwards the writer can copy and reset
// the whole WAL, which a read lock left behind would prevent.
func TestSeekHeldMatchesSQLite(t *testing.T) {
	for _, mmap := range []int{0, 256 << 20} {
		t.Run(fmt.Sprintf("mmap=%d", mmap), func(t *testing.T) { testSeekHeld(t, mmap) })
	}
}

func testSeekHeld(t *testing.T, mmap int) {
	file := filepath.Join(t.TempDir(), "held.db")
	w := openRawAt(t, file)
	w.exec(`PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;
		CREATE TABLE t (key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID`)
	rng := rand.New(rand.NewPCG(36, 3))
	model := map[string]bool{}
	write := func(db *rawDB, n int) {
		db.exec("BEGIN IMMEDIATE")
		for _, k := range seekKeys(rng, n) {
			if len(k) > 100 && rng.IntN(10) > 0 {
				continue // a few rows on overflow pages, not on most paths
			}
			if rng.IntN(4) == 0 && len(model) > 0 {
				for m := range model { // delete some row
					db.exec("DELETE FROM t WHERE key = " + blobLit([]byte(m)))
					delete(model, m)
					break
				}
				continue
			}
			db.exec("INSERT OR REPLACE INTO t VALUES (" + blobLit(k) + ", " + blobLit(fmt.Appendf(nil, "v%0100d", rng.IntN(1000))) + ")")
			model[string(k)] = true
		}
		db.exec("COMMIT")
	}
	write(w, 6000)
	w.exec("PRAGMA wal_checkpoint(TRUNCATE)")

	r := openRawAt(t, file)
	r.exec(fmt.Sprintf("PRAGMA mmap_size=%d", mmap))
	c := New(r.tls, r.db)
	t.Cleanup(c.Close)
	require.True(t, c.init())
	tbl := &layout.Objects{Names: layout.Names{Data: "t"}}

	kept, rightKept, fallbacks, seeks := 0, 0, 0, 0
	for round := range 12 {
		r.exec("BEGIN")
		r.exec("SELECT count(*) FROM sqlite_schema") // takes the snapshot
		bt, ok := c.inTx(sqlite3.SQLITE_TXN_READ)
		require.True(t, ok)
		require.Equal(t, int32(sqlite3.SQLITE_TXN_READ), c.held)
		res := c.resolve(tbl)
		require.True(t, res.ok)
		require.Equal(t, int32(sqlite3.SQLITE_OK), c.cursorFor(bt, curKeys, res.data, c.keyInfo1, 0))
		keys := make([][]byte, 0, len(model))
		for k := range model {
			keys = append(keys, []byte(k))
		}
		ps := probes(keys, rng)
		rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
		ps = ps[:min(len(ps), 6000)]
		// The last keys, and keys past them, in turn with the others: the
		// last leaf's shortcut, taken and left.
		slices.SortFunc(keys, bytes.Compare)
		for i, k := range keys[len(keys)-100:] {
			at := rng.IntN(len(ps))
			ps = slices.Insert(ps, at, k, append(bytes.Clone(k), byte(i)), []byte{0xff, 0xff, byte(i)})
		}
		for i, k := range ps {
			if i%1000 == 500 {
				// Another connection commits, and copies what it can of
				// the WAL into the file: this snapshot stays.
				write(w, 50)
				w.exec("PRAGMA wal_checkpoint(PASSIVE)")
			}
			rec, found, ok := c.seekHeld(bt, res.data, k)
			goSeek = false
			sFound, _, rc := c.seekOn(c.cur[curKeys], c.keyInfo1, k)
			goSeek = true
			require.Equal(t, int32(sqlite3.SQLITE_OK), rc)
			seeks++
			if !ok {
				fallbacks++
				continue
			}
			require.Equal(t, sFound, found, "round %d: %x", round, k)
			if found {
				want, rc := c.readRow(c.cur[curKeys], &c.ibuf)
				require.Equal(t, int32(sqlite3.SQLITE_OK), rc)
				require.True(t, bytes.Equal(want, rec), "round %d: %x", round, k)
			}
		}
		kept = max(kept, len(c.hp.interior))
		if c.hp.right != 0 {
			rightKept++
		}
		require.LessOrEqual(t, len(c.hp.interior), maxInterior)
		require.NoError(t, c.Release())
		require.Empty(t, c.hp.interior)
		require.Zero(t, c.hp.nLast)
		require.Zero(t, c.hp.right)
		r.exec("COMMIT")
		switch round % 3 {
		case 0:
			write(w, 300) // a new snapshot for the next round
		case 1:
			write(r, 300) // this connection's own commit
		}
	}
	require.Positive(t, kept, "no interior page was kept: the test proves nothing")
	require.Positive(t, rightKept, "the last leaf was never kept")
	require.Positive(t, fallbacks, "no seek met a row on overflow pages")
	require.Less(t, fallbacks, seeks/4)

	// No page is still held, and no read lock with it: the writer copies
	// the whole WAL and resets it.
	p := sqlite3.Xsqlite3_malloc(w.tls, 8)
	defer sqlite3.Xsqlite3_free(w.tls, p)
	require.Equal(t, int32(sqlite3.SQLITE_OK), sqlite3.Xsqlite3_wal_checkpoint_v2(w.tls, w.db, 0, sqlite3.SQLITE_CHECKPOINT_TRUNCATE, p, p+4))
}

// The pages of SQLite's page cache a held read keeps stay within the
// cache's size: half a small cache, all but 64 pages of a larger one.
func TestSeekHeldKeepsCachedPagesWithinCache(t *testing.T) {
	r := openRaw(t)
	r.exec(`CREATE TABLE t (key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID`)
	r.exec("BEGIN")
	for i := range 60_000 {
		r.insert("t", blobLit(fmt.Appendf(nil, "key%06d", i)), blobLit(fmt.Appendf(nil, "%0100d", i)))
	}
	r.exec("COMMIT")
	c := New(r.tls, r.db)
	t.Cleanup(c.Close)
	require.True(t, c.init())
	tbl := &layout.Objects{Names: layout.Names{Data: "t"}}
	all := 0 // the tree's interior pages
	for _, cc := range []struct {
		pragma string
		limit  int
	}{
		{"PRAGMA cache_size = 5000", maxInterior}, // first: every interior page
		{"PRAGMA cache_size = 64", 32},
		{"PRAGMA cache_size = 100", 50},
		{"PRAGMA cache_size = 200", 136},
	} {
		r.exec(cc.pragma) // no mapping: every page is the cache's
		r.exec("BEGIN")
		r.exec("SELECT count(*) FROM sqlite_schema")
		bt, ok := c.inTx(sqlite3.SQLITE_TXN_READ)
		require.True(t, ok)
		res := c.resolve(tbl)
		require.True(t, res.ok)
		require.Equal(t, cc.limit, cachedLimit((*sqlite3.TBtree)(cptr(bt)).FpBt), cc.pragma)
		for i := range 60_000 {
			_, found, ok := c.seekHeld(bt, res.data, fmt.Appendf(nil, "key%06d", i))
			require.True(t, ok)
			require.True(t, found)
		}
		if all == 0 {
			all = len(c.hp.interior)
			require.Greater(t, all, 50, "a tree of more interior pages than the small caches keep")
		}
		require.Equal(t, min(cc.limit, all), len(c.hp.interior), cc.pragma)
		require.Equal(t, len(c.hp.interior), c.hp.cached, cc.pragma)
		require.NoError(t, c.Release())
		r.exec("COMMIT")
	}
}

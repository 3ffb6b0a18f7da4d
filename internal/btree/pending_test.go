//go:build !snkv_nofast

package btree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/snkv-go/snkv/internal/layout"
	"github.com/stretchr/testify/require"
	sqlite3 "modernc.org/sqlite/lib"
)

// seekNear, made from where the previous seek left the cursor, finds what
// SQLite's own seek finds from the root: the equal row (res 0) or the row
// just before the key (res -1), for keys in order (the flush of pending
// TTL rows) and in random order, for one- and two-field search keys, on
// trees of several levels with overflowing cells; and where it cannot
// tell from the leaf it declines.
func TestSeekNearMatchesSQLite(t *testing.T) {
	r := openRaw(t)
	r.exec(`CREATE TABLE t (key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID;
		CREATE TABLE e (a BLOB NOT NULL, b BLOB NOT NULL, PRIMARY KEY (a, b)) WITHOUT ROWID;`)
	rng := rand.New(rand.NewPCG(34, 7))
	keys := seekKeys(rng, 4000)
	r.exec("BEGIN")
	for _, k := range keys {
		r.insert("t", blobLit(k), blobLit(fmt.Appendf(nil, "v%d", rng.IntN(100))))
		r.insert("e", blobLit(k[:min(len(k), 3)]), blobLit(k))
	}
	r.exec("COMMIT")
	c, bt := beginWrite(t, r)
	// rowAt is the record under cursor cur, copied.
	rowAt := func(cur uintptr) []byte {
		rec, rc := c.readRow(cur, &c.buf)
		require.Equal(t, int32(sqlite3.SQLITE_OK), rc)
		return bytes.Clone(rec)
	}
	check := func(table string, keyInfo uintptr, probe func(k []byte) [][]byte, sorted bool) {
		res := c.resolve(&layout.Objects{Names: layout.Names{Data: table}})
		require.True(t, res.ok, table)
		for _, i := range []int{curData, curKeys} {
			require.Equal(t, int32(sqlite3.SQLITE_OK), c.cursorFor(bt, i, res.data, keyInfo, btreeWrCsr))
		}
		nearCur, sqlCur := c.cur[curData], c.cur[curKeys]
		ps := probes(keys, rng)
		if sorted {
			slices.SortFunc(ps, func(a, b []byte) int {
				fa, fb := probe(a), probe(b)
				for i := range fa {
					if d := bytes.Compare(fa[i], fb[i]); d != 0 {
						return d
					}
				}
				return 0
			})
		} else {
			rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
		}
		hits := 0
		for _, k := range ps {
			fields := probe(k)
			nRes, nearOK := seekNear(nearCur, fields)
			if !nearOK {
				// Where the flush would go: SQLite's place, from the root.
				_, rc := c.moveto(nearCur, keyInfo, false, fields...)
				require.Equal(t, int32(sqlite3.SQLITE_OK), rc)
				continue
			}
			hits++
			goSeek = false
			sFound, sRes, sRC := c.seekOn(sqlCur, keyInfo, fields...)
			goSeek = true
			require.Equal(t, int32(sqlite3.SQLITE_OK), sRC)
			if nRes == 0 {
				require.True(t, sFound, "%s %x", table, fields)
				require.Equal(t, rowAt(sqlCur), rowAt(nearCur), "%s %x", table, fields)
				continue
			}
			require.Equal(t, int32(-1), nRes)
			require.False(t, sFound, "%s %x", table, fields)
			if sRes > 0 {
				// SQLite stopped on the row after the key: the one before
				// it is where seekNear stops.
				require.Equal(t, int32(sqlite3.SQLITE_OK), btreePrevious(c.tls, sqlCur, 0), "%s %x", table, fields)
			}
			require.Equal(t, rowAt(sqlCur), rowAt(nearCur), "%s %x", table, fields)
		}
		if sorted {
			require.Greater(t, hits, len(ps)/2, "%s: most seeks in key order stay on the leaf", table)
		} else {
			require.Positive(t, hits, table)
		}
	}
	for _, sorted := range []bool{true, false} {
		check("t", c.keyInfo1, func(k []byte) [][]byte { return [][]byte{k} }, sorted)
		check("e", c.keyInfo2, func(k []byte) [][]byte { return [][]byte{k[:min(len(k), 3)], k} }, sorted)
	}
}

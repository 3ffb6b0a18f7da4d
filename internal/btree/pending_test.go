//go:build !snkv_nofast

package btree

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/snkv-go/snkv/internal/layout"
	"github.com/stretchr/testify/require"
	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// seekNear, made from where the previous seek left the cursor, finds what
// SQLite's own seek finds from the root: the equal row (res 0) or the row
// just before the key (res -1), for keys in order (the flush of pending
// TTL rows) and in random order, for one- and two-field search keys, on
// trees of several levels with overflowing cells; and where it cannot
// tell from the leaf it declines.
func TestSeekNearMatchesSQLite(t *testing.T) {
	r, rng, keys := seekTrees(t, 34, 7)
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

// ttlTables creates in r column family "t" in the current layout with its
// TTL tables and the expiry copy, and returns its objects.
func ttlTables(t *testing.T, r *rawDB) *layout.Objects {
	t.Helper()
	o := layout.For("t", true, true)
	for _, q := range append(append([]string{o.DataTableSQL(), o.ChecksumTriggerSQL(), o.PlainViewSQL()}, o.EnableSQL()...), o.EnableCopySQL()...) {
		r.exec(q)
	}
	return &o
}

// A flush of pending TTL rows that fails is reported by the call that
// needed it: Release (before the next statement) or a read below SQL,
// which declines and leaves the report to Release; nothing stays pending
// after it, so the rollback that follows runs.
func TestPendingFlushFailureIsReported(t *testing.T) {
	for _, via := range []string{"release", "read"} {
		t.Run(via, func(t *testing.T) {
			r := openRaw(t)
			o := ttlTables(t, r)
			c, _ := beginWrite(t, r)
			exp := []byte{0, 0, 1, 0, 0, 0, 0, 0}
			ok, err := c.PutTTL(o, []byte("k"), []byte("v"), 7, exp, 9)
			require.NoError(t, err)
			require.True(t, ok, "the fast path took the write")
			require.Len(t, c.pend.ents, 1, "its index rows are pending")
			// A key index root past the file's end: its first seek fails.
			c.pend.r.keys = 1 << 30
			if via == "read" {
				_, ok, _, _, err := c.Lookup(o, []byte("k"), true)
				require.NoError(t, err)
				require.False(t, ok, "the read leaves it to SQL")
			}
			require.Error(t, c.Release())
			require.Empty(t, c.pend.ents)
			require.NoError(t, c.Release(), "reported once")
		})
	}
}

// Pending rows are written by Release and make the same tables as rows
// written at once: the key index and the expiry index hold each key's
// last expiry, the rows it replaced gone.
func TestPendingFlushWritesTheLastExpiry(t *testing.T) {
	r := openRaw(t)
	o := ttlTables(t, r)
	c, _ := beginWrite(t, r)
	exp := func(n byte) []byte { return []byte{0, 0, 1, 0, 0, 0, 0, n} }
	for i, k := range []string{"c", "a", "b", "a", "c", "c"} {
		ok, err := c.PutTTL(o, []byte(k), []byte("v"), 7, exp(byte(10-i)), int64(i))
		require.NoError(t, err)
		require.True(t, ok)
	}
	require.NoError(t, c.Release())
	rows := r.texts
	require.Equal(t, []string{"a 0000010000000007 3", "b 0000010000000008 2", "c 0000010000000005 5"},
		rows(`SELECT CAST(key AS TEXT) || ' ' || hex(expire_ms) || ' ' || crc FROM `+o.Quoted.Keys+` ORDER BY key`))
	require.Equal(t, []string{"0000010000000005 c", "0000010000000007 a", "0000010000000008 b"},
		rows(`SELECT hex(expire_ms) || ' ' || CAST(key AS TEXT) FROM `+o.Quoted.Expiry+` ORDER BY expire_ms, key`))
	// A second run replaces those rows (b's with the same expiry and
	// checksum: kept as it is).
	for i, k := range []string{"b", "c", "a", "d"} {
		n := []byte{8, 20, 21, 22}[i]
		ok, err := c.PutTTL(o, []byte(k), []byte("v"), 7, exp(n), []int64{2, 6, 7, 8}[i])
		require.NoError(t, err)
		require.True(t, ok)
	}
	require.NoError(t, c.Release())
	require.Equal(t, []string{"a 0000010000000015 7", "b 0000010000000008 2", "c 0000010000000014 6", "d 0000010000000016 8"},
		rows(`SELECT CAST(key AS TEXT) || ' ' || hex(expire_ms) || ' ' || crc FROM `+o.Quoted.Keys+` ORDER BY key`))
	require.Equal(t, []string{"0000010000000008 b", "0000010000000014 c", "0000010000000015 a", "0000010000000016 d"},
		rows(`SELECT hex(expire_ms) || ' ' || CAST(key AS TEXT) FROM `+o.Quoted.Expiry+` ORDER BY expire_ms, key`))
}

// texts runs query q and returns the first column of each row as text.
func (r *rawDB) texts(q string) []string {
	z, err := libc.CString(q)
	require.NoError(r.t, err)
	defer libc.Xfree(r.tls, z)
	pp := sqlite3.Xsqlite3_malloc(r.tls, 8)
	defer sqlite3.Xsqlite3_free(r.tls, pp)
	require.Equal(r.t, int32(sqlite3.SQLITE_OK), sqlite3.Xsqlite3_prepare_v2(r.tls, r.db, z, -1, pp, 0), q)
	stmt := *(*uintptr)(cptr(pp))
	defer sqlite3.Xsqlite3_finalize(r.tls, stmt)
	var out []string
	for sqlite3.Xsqlite3_step(r.tls, stmt) == sqlite3.SQLITE_ROW {
		out = append(out, libc.GoString(sqlite3.Xsqlite3_column_text(r.tls, stmt, 0)))
	}
	return out
}

// The flush writes the pending rows in index order whatever order they
// came in: keys and expiries both rising (no sort), keys rising with
// expiries falling, keys out of order under one expiry or under rising
// expiries, and keys written twice. Each run leaves both indexes holding
// each key's last expiry and checksum, and SQLite finds the file sound.
func TestPendingFlushSortsWhatCameOutOfOrder(t *testing.T) {
	type put struct {
		key string
		exp byte
	}
	for _, tc := range []struct {
		name string
		puts []put
	}{
		{"keys and expiries rising", []put{{"a", 1}, {"b", 1}, {"c", 2}, {"d", 3}}},
		{"keys rising, expiries falling", []put{{"a", 9}, {"b", 8}, {"c", 7}, {"d", 7}}},
		{"keys rising, one expiry repeated", []put{{"a", 5}, {"b", 5}, {"b", 5}, {"c", 5}}},
		{"keys falling, one expiry", []put{{"d", 5}, {"c", 5}, {"b", 5}, {"a", 5}}},
		{"keys falling, expiries rising", []put{{"d", 1}, {"c", 2}, {"b", 3}, {"a", 4}}},
		{"keys out of order, expiries rising then falling", []put{{"b", 1}, {"a", 2}, {"d", 3}, {"c", 1}}},
		{"a key written again later", []put{{"a", 1}, {"b", 2}, {"c", 3}, {"a", 4}, {"b", 0}}},
		{"a key written again with an earlier expiry", []put{{"a", 4}, {"a", 2}, {"b", 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := openRaw(t)
			o := ttlTables(t, r)
			c, _ := beginWrite(t, r)
			last := map[string]put{}
			crcs := map[string]int64{}
			for i, p := range tc.puts {
				exp := []byte{0, 0, 1, 0, 0, 0, 0, p.exp}
				ok, err := c.PutTTL(o, []byte(p.key), []byte("v"), 7, exp, int64(100+i))
				require.NoError(t, err)
				require.True(t, ok)
				last[p.key], crcs[p.key] = p, int64(100+i)
			}
			require.NoError(t, c.Release())
			keys := make([]string, 0, len(last))
			for k := range last {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			var wantKeys, wantExp []string
			for _, k := range keys {
				wantKeys = append(wantKeys, fmt.Sprintf("%s 00000100000000%02X %d", k, last[k].exp, crcs[k]))
			}
			slices.SortFunc(keys, func(a, b string) int {
				if d := int(last[a].exp) - int(last[b].exp); d != 0 {
					return d
				}
				return strings.Compare(a, b)
			})
			for _, k := range keys {
				wantExp = append(wantExp, fmt.Sprintf("00000100000000%02X %s", last[k].exp, k))
			}
			rows := r.texts
			require.Equal(t, wantKeys,
				rows(`SELECT CAST(key AS TEXT) || ' ' || hex(expire_ms) || ' ' || crc FROM `+o.Quoted.Keys+` ORDER BY key`))
			require.Equal(t, wantExp,
				rows(`SELECT hex(expire_ms) || ' ' || CAST(key AS TEXT) FROM `+o.Quoted.Expiry+` ORDER BY expire_ms, key`))
			require.Equal(t, []string{"ok"}, rows(`PRAGMA integrity_check`))
		})
	}
}

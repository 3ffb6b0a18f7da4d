package btree_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/btree"
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/stretchr/testify/require"
)

// PutRecord writes byte for byte the record SQLite writes for the same
// row: each row is inserted with SQL into a table of its own, and the page
// SQLite wrote (read back through sqlite_dbpage) must contain the record
// AppendRecord builds.
func TestRecordMatchesSQLite(t *testing.T) {
	db, err := engine.Open(engine.Config{Path: filepath.Join(t.TempDir(), "r.db"), Journal: "DELETE",
		Sync: "NORMAL", BusyTimeout: time.Second, MaxReaders: 1})
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	crcs := []int64{0, 1, -1, 2, 127, 128, -128, -129, 32767, 32768, -32769, 8388607, 8388608,
		2147483647, -2147483648, 4294967296, 140737488355327, 140737488355328, -9223372036854775808}
	keys := [][]byte{{0}, []byte("k"), bytes.Repeat([]byte{0xab}, 57), bytes.Repeat([]byte{7}, 300)}
	values := [][]byte{{}, []byte("v"), bytes.Repeat([]byte{1}, 58), bytes.Repeat([]byte{2}, 1000)}
	c, err := db.AcquireWriter(ctx)
	require.NoError(t, err)
	defer db.ReleaseWriter(c)
	n := 0
	for _, k := range keys {
		for _, v := range values {
			for _, crc := range crcs {
				require.NoError(t, c.ExecScript(ctx, `DROP TABLE IF EXISTS t; CREATE TABLE t (key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL, crc INTEGER NOT NULL) STRICT, WITHOUT ROWID`))
				_, err := c.Exec(ctx, `INSERT INTO t (key, value, crc) VALUES (?1, ?2, ?3)`, k, v, crc)
				require.NoError(t, err)
				rec, off := btree.AppendRecord(nil, k, v, crc, true)
				require.Equal(t, k, rec[off:off+len(k)])
				require.Equal(t, len(rec), btree.RecordSize(k, v, crc, true))
				page := tablePage(t, c)
				// A record too large for one cell keeps its head on the
				// page (at least 480 bytes on a 4 KiB page) and the rest
				// on overflow pages.
				head := rec[:min(len(rec), 480)]
				require.True(t, bytes.Contains(page, head), "key %d bytes, value %d bytes, crc %d: record % x not in the page", len(k), len(v), crc, head)
				n++
			}
		}
	}
	// Without the checksum column (a version-1 table).
	require.NoError(t, c.ExecScript(ctx, `DROP TABLE t; CREATE TABLE t (key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID`))
	_, err = c.Exec(ctx, `INSERT INTO t (key, value) VALUES (?1, ?2)`, []byte("key"), []byte("value"))
	require.NoError(t, err)
	rec, _ := btree.AppendRecord(nil, []byte("key"), []byte("value"), 0, false)
	require.True(t, bytes.Contains(tablePage(t, c), rec))
	require.Greater(t, n, 200)
}

// tablePage returns the root page of table t.
func tablePage(t *testing.T, c *engine.Conn) []byte {
	t.Helper()
	rows, err := c.Query(context.Background(), `SELECT data FROM sqlite_dbpage WHERE pgno = (SELECT rootpage FROM sqlite_schema WHERE name = 't')`)
	require.NoError(t, err)
	defer rows.Close()
	require.True(t, rows.Next())
	return rows.Bytes(0)
}

// Varints take the length the record format defines (7 bits a byte, and a
// ninth byte of 8 bits) and read back as written.
func TestVarintLengths(t *testing.T) {
	for _, tc := range []struct {
		v uint64
		n int
	}{{0, 1}, {127, 1}, {128, 2}, {16383, 2}, {16384, 3}, {1<<21 - 1, 3}, {1 << 21, 4}, {1<<56 - 1, 8}, {1 << 56, 9}, {^uint64(0), 9}} {
		require.Equal(t, tc.n, btree.VarintLen(tc.v), "varint length of %d", tc.v)
		b := make([]byte, 9)
		require.Equal(t, tc.n, btree.PutVarint(b, tc.v), "varint bytes of %d", tc.v)
		got, n := btree.ReadVarint(b[:tc.n])
		require.Equal(t, tc.v, got, "varint %d read back", tc.v)
		require.Equal(t, tc.n, n)
	}
}

// ParseRecord reads back what AppendRecord writes, fields past the record's
// end read as NULL, and a truncated or malformed record is refused, never
// read past its end.
func TestParseRecord(t *testing.T) {
	for _, crc := range []int64{0, 1, -1, 300, -70000, 1 << 40, -1 << 62} {
		for _, n := range []int{0, 1, 57, 58, 300, 9000} {
			k, v := bytes.Repeat([]byte{'k'}, 1+n/3), bytes.Repeat([]byte{'v'}, n)
			rec, _ := btree.AppendRecord(nil, k, v, crc, true)
			f := make([]btree.Field, 4)
			require.True(t, btree.ParseRecord(rec, f))
			require.Equal(t, btree.KindBlob, f[0].Kind)
			require.Equal(t, k, f[0].Bytes)
			require.Equal(t, btree.KindBlob, f[1].Kind)
			require.Equal(t, len(v), len(f[1].Bytes))
			require.Equal(t, btree.KindInt, f[2].Kind)
			require.Equal(t, crc, f[2].Int)
			require.Equal(t, btree.KindNull, f[3].Kind, "a field past the record's end")
			for cut := range len(rec) {
				require.False(t, btree.ParseRecord(rec[:cut], f[:3]), "record cut at %d of %d", cut, len(rec))
			}
		}
	}
	// Reserved serial types 10 and 11, and a header longer than the record.
	require.False(t, btree.ParseRecord([]byte{2, 10}, make([]btree.Field, 1)))
	require.False(t, btree.ParseRecord([]byte{2, 11}, make([]btree.Field, 1)))
	require.False(t, btree.ParseRecord([]byte{5, 12}, make([]btree.Field, 1)))
}

// The scans' shortcut for snkv's own rows reads what ParseRecord reads,
// and declines every record of another form.
func TestParseRowAgreesWithParseRecord(t *testing.T) {
	for _, crc := range []int64{0, 1, -1, 300, -70000, 1 << 40, -1 << 62, 4294967296} {
		for _, n := range []int{0, 1, 57, 58, 300, 8000, 9000} {
			k, v := bytes.Repeat([]byte{'k'}, 1+n/3), bytes.Repeat([]byte{'v'}, n)
			rec, _ := btree.AppendRecord(nil, k, v, crc, true)
			want := make([]btree.Field, 3)
			require.True(t, btree.ParseRecord(rec, want))
			got := make([]btree.Field, 3)
			kv, tail, ok := btree.ParseRow(rec, got)
			if len(k) > 8000 || len(v) > 8000 {
				require.False(t, ok, "a serial type of three bytes takes the general path")
				continue
			}
			require.True(t, ok, "key %d, value %d, crc %d", len(k), len(v), crc)
			require.Equal(t, want, got)
			require.Equal(t, append(append([]byte{}, k...), v...), kv)
			require.Nil(t, tail)
			for cut := range len(rec) {
				_, _, ok := btree.ParseRow(rec[:cut], got)
				require.False(t, ok, "cut at %d", cut)
			}
			// The same row with its expiry copy: the same fields, and the
			// copy as the tail, as ParseRecord reads the fourth field.
			cp := []byte("0123456789ab")
			rec4 := btree.AppendCopyRecord(nil, k, v, crc, cp)
			want4 := make([]btree.Field, 4)
			require.True(t, btree.ParseRecord(rec4, want4))
			require.Equal(t, cp, want4[3].Bytes)
			kv, tail, ok = btree.ParseRow(rec4, got)
			require.True(t, ok)
			require.Equal(t, want, got)
			require.Equal(t, append(append([]byte{}, k...), v...), kv)
			require.Equal(t, cp, tail)
			for cut := range len(rec4) {
				_, _, ok := btree.ParseRow(rec4[:cut], got)
				require.False(t, ok, "cut at %d", cut)
			}
		}
	}
	two, _ := btree.AppendRecord(nil, []byte("k"), []byte("v"), 0, false)
	_, _, ok := btree.ParseRow(two, make([]btree.Field, 3))
	require.False(t, ok, "two fields")
	text := []byte{4, 15, 14, 1, 'k', 'v', 7} // a TEXT key
	_, _, ok = btree.ParseRow(text, make([]btree.Field, 3))
	require.False(t, ok, "a TEXT key")
}

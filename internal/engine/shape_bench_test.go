package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// shapeVariant is one table layout and read statement measured by
// BenchmarkRowShape.
type shapeVariant struct {
	name   string
	create []string
	table  string // loaded with key, value and (crc >= 0) the checksum
	crc    int    // position of crc among the insert's columns, -1 none
	scan   string // full ordered scan
	get    string // point read
	expCol int    // column of expire_ms in scan (value is 1, key 0)
	crcCol int    // column of crc in scan (-1: none); get uses crcCol-1
	sum    bool   // compute the CRC-32C of key and value per row
	blob   bool   // read key and value with Blob (no type look-up)
	calls3 bool   // read key and value as before RawBlob found the column once: Kind, then Blob
	inVal  bool   // the CRC is the value's last 4 bytes (crc == -3 when loading), not a column
}

var shapeTable = crc32.MakeTable(crc32.Castagnoli)

// BenchmarkRowShape measures, in one file and one run, what each part of
// the format-2 read path costs SQLite: the checksum column, STRICT, the
// column order, reading through the view, and computing the CRC. Every
// variant holds the same 100k keys of 16 bytes with 100-byte values and is
// timed in turn inside each iteration (reported as ns per row or per get,
// and as a ratio to "v1"). v1-crcinvalue is a layout snkv does not use: the
// checksum as the last 4 bytes of the value, with no column of its own. The
// figures are quoted in docs/benchmarks.md.
func BenchmarkRowShape(b *testing.B) {
	const n = 100_000
	db, err := Open(Config{Path: filepath.Join(b.TempDir(), "shape.db"), Journal: "WAL", Sync: "NORMAL", BusyTimeout: time.Second})
	require.NoError(b, err)
	b.Cleanup(func() { _ = db.Close() })
	ctx := context.Background()
	vs := []shapeVariant{
		{name: "v1", table: "t1", crc: -1, expCol: 2, crcCol: -1, create: []string{
			`CREATE TABLE t1 (key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID`,
			`CREATE VIEW w1 AS SELECT key, value, NULL AS expire_ms FROM t1`},
			scan: `SELECT key, value, expire_ms FROM w1 ORDER BY key`, get: `SELECT value, expire_ms FROM w1 WHERE key = ?1`},
		{name: "v2", table: "t2", crc: 2, expCol: 2, crcCol: 3, sum: true, create: []string{
			`CREATE TABLE t2 (key BLOB PRIMARY KEY NOT NULL CHECK (length(key) BETWEEN 1 AND 65536), value BLOB NOT NULL, crc INTEGER NOT NULL DEFAULT 4294967296) STRICT, WITHOUT ROWID`,
			`CREATE VIEW w2 AS SELECT key, value, crc, NULL AS expire_ms, NULL AS ecrc FROM t2`},
			scan: `SELECT key, value, expire_ms, crc, ecrc FROM w2 ORDER BY key`, get: `SELECT value, expire_ms, crc, ecrc FROM w2 WHERE key = ?1`},
		{name: "v2-nosum", table: "t2", crc: -2, expCol: 2, crcCol: 3,
			scan: `SELECT key, value, expire_ms, crc, ecrc FROM w2 ORDER BY key`, get: `SELECT value, expire_ms, crc, ecrc FROM w2 WHERE key = ?1`},
		{name: "v2-blob", table: "t2", crc: -2, expCol: 2, crcCol: 3, sum: true, blob: true,
			scan: `SELECT key, value, expire_ms, crc, ecrc FROM w2 ORDER BY key`, get: `SELECT value, expire_ms, crc, ecrc FROM w2 WHERE key = ?1`},
		{name: "v2-3calls", table: "t2", crc: -2, expCol: 2, crcCol: 3, sum: true, calls3: true,
			scan: `SELECT key, value, expire_ms, crc, ecrc FROM w2 ORDER BY key`, get: `SELECT value, expire_ms, crc, ecrc FROM w2 WHERE key = ?1`},
		{name: "v2-nocrccol", table: "t2", crc: -2, expCol: 2, crcCol: -1,
			scan: `SELECT key, value, expire_ms FROM w2 ORDER BY key`, get: `SELECT value, expire_ms FROM w2 WHERE key = ?1`},
		{name: "v2-table", table: "t2", crc: -2, expCol: -1, crcCol: 2, sum: true,
			scan: `SELECT key, value, crc FROM t2 ORDER BY key`, get: `SELECT value, crc FROM t2 WHERE key = ?1`},
		{name: "v2-notstrict", table: "t3", crc: 2, expCol: 2, crcCol: 3, sum: true, create: []string{
			`CREATE TABLE t3 (key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL, crc INTEGER NOT NULL DEFAULT 4294967296) WITHOUT ROWID`,
			`CREATE VIEW w3 AS SELECT key, value, crc, NULL AS expire_ms, NULL AS ecrc FROM t3`},
			scan: `SELECT key, value, expire_ms, crc, ecrc FROM w3 ORDER BY key`, get: `SELECT value, expire_ms, crc, ecrc FROM w3 WHERE key = ?1`},
		{name: "v1-crcinvalue", table: "t5", crc: -3, expCol: 2, crcCol: -1, sum: true, inVal: true, create: []string{
			`CREATE TABLE t5 (key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID`,
			`CREATE VIEW w5 AS SELECT key, value, NULL AS expire_ms FROM t5`},
			scan: `SELECT key, value, expire_ms FROM w5 ORDER BY key`, get: `SELECT value, expire_ms FROM w5 WHERE key = ?1`},
		{name: "v2-crcfirst", table: "t4", crc: 1, expCol: 2, crcCol: 3, sum: true, create: []string{
			`CREATE TABLE t4 (key BLOB PRIMARY KEY NOT NULL CHECK (length(key) BETWEEN 1 AND 65536), crc INTEGER NOT NULL DEFAULT 4294967296, value BLOB NOT NULL) STRICT, WITHOUT ROWID`,
			`CREATE VIEW w4 AS SELECT key, value, crc, NULL AS expire_ms, NULL AS ecrc FROM t4`},
			scan: `SELECT key, value, expire_ms, crc, ecrc FROM w4 ORDER BY key`, get: `SELECT value, expire_ms, crc, ecrc FROM w4 WHERE key = ?1`},
	}
	keys := make([][]byte, n)
	val := make([]byte, 100)
	require.NoError(b, db.WithWriter(ctx, func(c *Conn) error {
		if _, err := c.Exec(ctx, `BEGIN`); err != nil {
			return err
		}
		for _, v := range vs {
			for _, q := range v.create {
				if _, err := c.Exec(ctx, q); err != nil {
					return err
				}
			}
		}
		for _, v := range vs {
			if v.crc == -2 {
				continue // shares another variant's table
			}
			ins := fmt.Sprintf(`INSERT INTO %s (key, value) VALUES (?1, ?2)`, v.table)
			if v.inVal {
				ins = fmt.Sprintf(`INSERT INTO %s (key, value) VALUES (?1, ?4)`, v.table)
			}
			if v.crc >= 0 {
				ins = fmt.Sprintf(`INSERT INTO %s (key, value, crc) VALUES (?1, ?2, ?3)`, v.table)
			}
			for i := range n {
				k := make([]byte, 16)
				binary.BigEndian.PutUint64(k, uint64(i)*0x9E3779B97F4A7C15)
				binary.BigEndian.PutUint64(k[8:], uint64(i))
				keys[i] = k
				binary.BigEndian.PutUint64(val, uint64(i))
				sum := crc32.Update(crc32.Checksum(k, shapeTable), shapeTable, val)
				if _, err := c.Exec(ctx, ins, k, val, int64(sum), binary.BigEndian.AppendUint32(append([]byte(nil), val...), sum)); err != nil {
					return err
				}
			}
		}
		_, err := c.Exec(ctx, `COMMIT`)
		return err
	}))
	require.NoError(b, db.WithWriter(ctx, func(c *Conn) error {
		_, err := c.Exec(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
		return err
	}))
	var sink uint32
	readRow := func(r *Rows, v shapeVariant, key []byte, off int) error {
		var k int
		if v.expCol >= 0 && v.calls3 {
			if k = r.Kind(v.expCol - off); k != KindNull {
				return fmt.Errorf("expiry %d", k)
			}
		} else if v.expCol >= 0 {
			if _, k = r.RawBlob(v.expCol - off); k != KindNull {
				return fmt.Errorf("expiry %d", k)
			}
		}
		var val []byte
		if v.calls3 {
			if k = r.Kind(1 - off); k != KindBlob {
				return fmt.Errorf("value %d", k)
			}
			val = r.Blob(1 - off)
		} else if v.blob {
			val = r.Blob(1 - off)
		} else if val, k = r.RawBlob(1 - off); k != KindBlob {
			return fmt.Errorf("value %d", k)
		}
		if v.inVal {
			n := len(val) - 4
			if n < 0 || crc32.Update(crc32.Checksum(key, shapeTable), shapeTable, val[:n]) != binary.BigEndian.Uint32(val[n:]) {
				return fmt.Errorf("crc")
			}
			val = val[:n]
		}
		if v.crcCol >= 0 {
			got := r.Int(v.crcCol - off)
			if v.sum && int64(crc32.Update(crc32.Checksum(key, shapeTable), shapeTable, val)) != got {
				return fmt.Errorf("crc")
			}
		}
		sink += uint32(len(val))
		return nil
	}
	run := func(b *testing.B, per int, op func(c *Conn, v shapeVariant, i int) error) {
		t := make([]time.Duration, len(vs))
		i := 0
		for b.Loop() {
			for j, v := range vs {
				a := time.Now()
				err := db.WithReader(ctx, func(c *Conn) error { return op(c, v, i) })
				t[j] += time.Since(a)
				if err != nil {
					b.Fatal(v.name, err)
				}
			}
			i++
		}
		for j, v := range vs {
			b.ReportMetric(float64(t[j].Nanoseconds())/float64(i*per), v.name+"-ns")
			if j > 0 {
				b.ReportMetric(float64(t[j])/float64(t[0]), v.name+"/v1")
			}
		}
	}
	b.Run("Scan", func(b *testing.B) {
		run(b, n, func(c *Conn, v shapeVariant, _ int) error {
			r, err := c.Query(ctx, v.scan)
			if err != nil {
				return err
			}
			rows := 0
			for r.Next() {
				var key []byte
				switch {
				case v.blob:
					key = r.Blob(0)
				case v.calls3:
					if r.Kind(0) == KindBlob {
						key = r.Blob(0)
					}
				default:
					key, _ = r.RawBlob(0)
				}
				if err := readRow(r, v, key, 0); err != nil {
					return err
				}
				rows++
			}
			if rows != n {
				return fmt.Errorf("%d rows", rows)
			}
			return r.Close()
		})
	})
	const gets = 100
	b.Run("Get", func(b *testing.B) {
		run(b, gets, func(c *Conn, v shapeVariant, i int) error {
			for g := range gets {
				key := keys[(i*gets+g)*7919%n]
				r, err := c.Query(ctx, v.get, key)
				if err != nil {
					return err
				}
				if !r.Next() {
					return fmt.Errorf("missing")
				}
				if err := readRow(r, v, key, 1); err != nil {
					return err
				}
				if err := r.Close(); err != nil {
					return err
				}
			}
			return nil
		})
	})
	_ = sink
}

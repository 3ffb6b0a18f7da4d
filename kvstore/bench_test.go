package kvstore_test

// Benchmarks of the store against a baseline: the same operation done the
// plain way, a database/sql prepared statement through the same driver on an
// identical table (key BLOB PRIMARY KEY, value BLOB, WITHOUT ROWID) with the
// same pragmas (WAL, synchronous=NORMAL). Every pair runs in one process so
// that ratios can be read from one run; see docs/benchmarks.md.
//
// Data set: 16-byte keys, 100-byte values, benchN keys loaded before the
// timer starts. Sub-benchmark names end in /snkv or /baseline so that pairs
// line up in benchstat output; the TTL benchmarks compare snkv with itself
// (with and without TTL) and add /sql replicas of snkv's own statements to
// show what SQLite charges for the same work.
//
// SNKV_BENCH_LARGE=1 adds the purge runs beside 1,000,000 live keys (about
// 20 s more). scripts/bench.sh runs the whole set several times.

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver for the baseline
)

const (
	benchN        = 100_000 // keys preloaded in every data set
	benchValueLen = 100
	benchBatch    = 1000 // keys per batch in BatchPut
	benchPrefix   = 14   // prefix length that selects 100 keys of benchKey
	benchValues   = 64   // distinct values cycled through by writes
)

// Baseline statements.
const (
	baseSchema  = `CREATE TABLE IF NOT EXISTS t(key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID`
	baseUpsert  = `INSERT INTO t(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`
	baseGet     = `SELECT value FROM t WHERE key = ?`
	baseExists  = `SELECT 1 FROM t WHERE key = ?`
	baseScan    = `SELECT key, value FROM t ORDER BY key`
	baseReverse = `SELECT key, value FROM t ORDER BY key DESC`
	baseRange   = `SELECT key, value FROM t WHERE key >= ? AND key < ? ORDER BY key`
)

// benchKey is the i-th key of the data set: 16 decimal digits, so keys sort
// by i and the first 14 bytes select a run of 100 keys.
func benchKey(i int) []byte { return fmt.Appendf(nil, "%016d", i) }

// benchMissKey is a 16-byte key that sorts among the data set's keys but is
// never stored.
func benchMissKey(i int) []byte { return fmt.Appendf(nil, "%015dx", i) }

// benchData holds the keys, a random visiting order and a few values.
type benchData struct {
	keys   [][]byte
	misses [][]byte // keys never stored, in random order
	order  []int    // a permutation of the key indexes: random point access
	values [][]byte
}

func newBenchData(n int) *benchData {
	r := rand.New(rand.NewPCG(1, 2))
	d := &benchData{keys: make([][]byte, n), misses: make([][]byte, n), order: r.Perm(n)}
	for i := range d.keys {
		d.keys[i] = benchKey(i)
	}
	for i, j := range d.order {
		d.misses[i] = benchMissKey(j)
	}
	d.values = randomValues(r)
	return d
}

// randomValues returns benchValues values of benchValueLen random bytes.
func randomValues(r *rand.Rand) [][]byte {
	vs := make([][]byte, benchValues)
	for i := range vs {
		vs[i] = make([]byte, benchValueLen)
		for j := range vs[i] {
			vs[i][j] = byte(r.Uint32())
		}
	}
	return vs
}

func (d *benchData) key(i int) []byte   { return d.keys[d.order[i%len(d.order)]] }
func (d *benchData) value(i int) []byte { return d.values[i%len(d.values)] }

// benchSeq numbers every value a write benchmark writes.
var benchSeq atomic.Uint64

// fresh fills buf with value(i) stamped with a new sequence number and
// returns it. Writes must change the stored bytes: SQLite skips writing a
// page when a row is overwritten with identical content, which would make a
// rewrite of what an earlier benchmark wrote look cheap.
func (d *benchData) fresh(i int, buf []byte) []byte {
	buf = append(buf[:0], d.value(i)...)
	binary.BigEndian.PutUint64(buf, benchSeq.Add(1))
	return buf
}

// putBatch makes batch round i of benchBatch puts of fresh values, their
// bytes in bufs (freshBufs(benchBatch)).
func (d *benchData) putBatch(batch *kvstore.Batch, i int, bufs [][]byte) {
	batch.Reset()
	for j := range benchBatch {
		n := i*benchBatch + j
		batch.Put(d.key(n), d.fresh(n, bufs[j]))
	}
}

// applyInBatches makes n writes (write(batch, i) adds the i-th to batch)
// through Apply of to, benchBatch of them a batch.
func applyInBatches(b *testing.B, to interface {
	Apply(context.Context, *kvstore.Batch) error
}, n int, write func(batch *kvstore.Batch, i int)) {
	b.Helper()
	var batch kvstore.Batch
	for i := range n {
		write(&batch, i)
		if batch.Len() == benchBatch || i == n-1 {
			require.NoError(b, to.Apply(context.Background(), &batch))
			batch.Reset()
		}
	}
}

// freshBufs returns n value buffers for fresh.
func freshBufs(n int) [][]byte {
	bufs := make([][]byte, n)
	for i := range bufs {
		bufs[i] = make([]byte, benchValueLen)
	}
	return bufs
}

// benchOpenStore opens (creating) a store file in dir.
func benchOpenStore(b *testing.B, dir, name string, opts kvstore.Options) *kvstore.Store {
	b.Helper()
	s, err := kvstore.Open(filepath.Join(dir, name), opts)
	require.NoError(b, err)
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// benchOpenSQL opens a database/sql handle on the file dir/name with the
// store's pragmas; with schema set it creates the baseline table.
func benchOpenSQL(b *testing.B, dir, name string, schema bool) *sql.DB {
	return benchOpenSQLWith(b, dir, name, schema, "")
}

// benchOpenSQLWith is benchOpenSQL with more DSN parameters (extra starts
// with "&").
func benchOpenSQLWith(b *testing.B, dir, name string, schema bool, extra string) *sql.DB {
	b.Helper()
	path := filepath.ToSlash(filepath.Join(dir, name))
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)" + extra
	db, err := sql.Open("sqlite", dsn)
	require.NoError(b, err)
	b.Cleanup(func() { _ = db.Close() })
	if schema {
		_, err = db.Exec(baseSchema)
		require.NoError(b, err)
	}
	return db
}

// benchLoad writes keys [from, to) of d through Apply, 1000 per batch; a
// positive ttl gives every key that TTL.
func benchLoad(b *testing.B, cf *kvstore.ColumnFamily, d *benchData, from, to int, ttl time.Duration) {
	b.Helper()
	applyInBatches(b, cf, to-from, func(batch *kvstore.Batch, i int) {
		if i += from; ttl > 0 {
			batch.PutTTL(d.keys[i], d.value(i), ttl)
		} else {
			batch.Put(d.keys[i], d.value(i))
		}
	})
}

// benchLoadSQL writes every key of d into the baseline table in one
// transaction.
func benchLoadSQL(b *testing.B, db *sql.DB, d *benchData) {
	b.Helper()
	tx, err := db.Begin()
	require.NoError(b, err)
	st, err := tx.Prepare(baseUpsert)
	require.NoError(b, err)
	for i, k := range d.keys {
		_, err := st.Exec(k, d.value(i))
		require.NoError(b, err)
	}
	require.NoError(b, tx.Commit())
}

// benchCheckpoint folds both WALs back into their files so that reads of
// both sides start from the same state.
func benchCheckpoint(b *testing.B, s *kvstore.Store, db *sql.DB) {
	b.Helper()
	_, err := s.Checkpoint(context.Background(), kvstore.CheckpointTruncate)
	require.NoError(b, err)
	_, err = db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	require.NoError(b, err)
}

func benchPrepare(b *testing.B, db *sql.DB, query string) *sql.Stmt {
	b.Helper()
	st, err := db.Prepare(query)
	require.NoError(b, err)
	b.Cleanup(func() { _ = st.Close() })
	return st
}

// prepareReads prepares the baseline's reads: a get, an exists, a scan
// forward and one in reverse, and a range.
func prepareReads(b *testing.B, db *sql.DB) (get, exists, scan, reverse, rng *sql.Stmt) {
	return benchPrepare(b, db, baseGet), benchPrepare(b, db, baseExists), benchPrepare(b, db, baseScan),
		benchPrepare(b, db, baseReverse), benchPrepare(b, db, baseRange)
}

func reportKeys(b *testing.B, keys int) {
	b.ReportMetric(float64(keys)/b.Elapsed().Seconds(), "keys/s")
}

// scanSQL reads every row of a baseline query into []byte (copies) and
// returns how many it read.
func scanSQL(b *testing.B, st *sql.Stmt, args ...any) int { return scanSQLAs[[]byte](b, st, args...) }

// scanSQLRaw is scanSQL reading each row into sql.RawBytes: no copies, as
// a borrowing scan of snkv.
func scanSQLRaw(b *testing.B, st *sql.Stmt, args ...any) int {
	return scanSQLAs[sql.RawBytes](b, st, args...)
}

// scanSQLAs reads every row of a baseline query into two T and returns
// how many it read.
func scanSQLAs[T any](b *testing.B, st *sql.Stmt, args ...any) int {
	rows, err := st.Query(args...)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	var k, v T
	for rows.Next() {
		if err := rows.Scan(&k, &v); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		b.Fatal(err)
	}
	return n
}

// benchPair returns the data set loaded into an snkv store and into the
// baseline's plain table, both checkpointed.
func benchPair(b *testing.B) (*benchData, *kvstore.Store, *sql.DB) {
	d := newBenchData(benchN)
	dir := b.TempDir()
	s := benchOpenStore(b, dir, "snkv.db", kvstore.Options{})
	db := benchOpenSQL(b, dir, "base.db", true)
	benchLoad(b, s.Default(), d, 0, benchN, 0)
	benchLoadSQL(b, db, d)
	benchCheckpoint(b, s, db)
	return d, s, db
}

// BenchmarkWrite compares single puts (each its own transaction) and batches
// of 1000 puts in one transaction. Keys are overwritten in random order, so
// the table keeps its size.
func BenchmarkWrite(b *testing.B) {
	d, s, db := benchPair(b)
	upsert := benchPrepare(b, db, baseUpsert)

	b.Run("Put/snkv", withCPU(func(b *testing.B) {
		buf := make([]byte, benchValueLen)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if err := s.Put(d.key(i), d.fresh(i, buf)); err != nil {
				b.Fatal(err)
			}
		}
	}))
	b.Run("Put/baseline", func(b *testing.B) {
		buf := make([]byte, benchValueLen)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := upsert.Exec(d.key(i), d.fresh(i, buf)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("BatchPut/snkv", withCPU(func(b *testing.B) { benchBatchPut(b, d, s) }))
	b.Run("BatchPut/baseline", func(b *testing.B) {
		buf := make([]byte, benchValueLen)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			tx, err := db.Begin()
			if err != nil {
				b.Fatal(err)
			}
			st := tx.Stmt(upsert)
			for j := range benchBatch {
				n := i*benchBatch + j
				if _, err := st.Exec(d.key(n), d.fresh(n, buf)); err != nil {
					b.Fatal(err)
				}
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
		}
		reportKeys(b, b.N*benchBatch)
	})
}

// BenchmarkRead compares point reads and scans over the same 100k keys.
func BenchmarkRead(b *testing.B) {
	d, s, db := benchPair(b)
	get, exists, scan, reverse, prefix := prepareReads(b, db)

	b.Run("Get/snkv", withCPU(func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := s.Get(d.key(i)); err != nil {
				b.Fatal(err)
			}
		}
	}))
	b.Run("Get/baseline", func(b *testing.B) {
		b.ReportAllocs()
		var v []byte
		for i := 0; b.Loop(); i++ {
			if err := get.QueryRow(d.key(i)).Scan(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("GetMiss/snkv", withCPU(func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := s.Get(d.misses[i%benchN]); !errors.Is(err, kvstore.ErrNotFound) {
				b.Fatal(err)
			}
		}
	}))
	b.Run("GetMiss/baseline", func(b *testing.B) {
		b.ReportAllocs()
		var v []byte
		for i := 0; b.Loop(); i++ {
			if err := get.QueryRow(d.misses[i%benchN]).Scan(&v); !errors.Is(err, sql.ErrNoRows) {
				b.Fatal(err)
			}
		}
	})
	b.Run("Exists/snkv", withCPU(func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if ok, err := s.Exists(d.key(i)); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	}))
	b.Run("Exists/baseline", func(b *testing.B) {
		b.ReportAllocs()
		var one int
		for i := 0; b.Loop(); i++ {
			if err := exists.QueryRow(d.key(i)).Scan(&one); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Scan/snkv", func(b *testing.B) { benchFullScan(b, s.All) })
	// The same scan lending its rows: what the copy costs is the difference.
	b.Run("ScanBorrow/snkv", func(b *testing.B) {
		benchFullScan(b, func() iter.Seq2[kvstore.Entry, error] {
			return s.Scan(kvstore.IterOptions{Borrow: true})
		})
	})
	b.Run("Scan/baseline", func(b *testing.B) { benchFullScanSQL(b, scan) })
	// Prefix scans select the 100 keys that share their first 14 bytes.
	prefixOf := func(i int) []byte { return d.key(i)[:benchPrefix] }
	b.Run("PrefixScan/snkv", func(b *testing.B) {
		b.ReportAllocs()
		cpu := startCPU()
		for i := 0; b.Loop(); i++ {
			n := 0
			for _, err := range s.Prefix(prefixOf(i)) {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != 100 {
				b.Fatalf("prefix scan gave %d keys, want 100", n)
			}
		}
		reportKeys(b, b.N*100)
		cpu.report(b, b.N)
	})
	// A prefix that is a whole key selects that key alone: the time is
	// almost all the set-up and end of an iteration.
	b.Run("PrefixOne/snkv", func(b *testing.B) {
		b.ReportAllocs()
		cpu := startCPU()
		for i := 0; b.Loop(); i++ {
			n := 0
			for _, err := range s.Prefix(d.key(i)) {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != 1 {
				b.Fatalf("prefix scan of a whole key gave %d keys, want 1", n)
			}
		}
		cpu.report(b, b.N)
	})
	// A prefix that no key has: the set-up and end of an iteration alone.
	b.Run("PrefixNone/snkv", func(b *testing.B) {
		b.ReportAllocs()
		cpu := startCPU()
		for i := 0; b.Loop(); i++ {
			for _, err := range s.Prefix(d.misses[i%benchN]) {
				if err != nil {
					b.Fatal(err)
				}
				b.Fatal("a prefix no key has gave a key")
			}
		}
		cpu.report(b, b.N)
	})
	b.Run("PrefixScan/baseline", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			p := prefixOf(i)
			end := append([]byte(nil), p...)
			end[len(end)-1]++ // the prefix is decimal digits: never 0xFF
			if n := scanSQL(b, prefix, p, end); n != 100 {
				b.Fatalf("prefix scan gave %d keys, want 100", n)
			}
		}
		reportKeys(b, b.N*100)
	})
	b.Run("ReverseScan/snkv", func(b *testing.B) { benchFullScan(b, s.Backward) })
	b.Run("ReverseScanBorrow/snkv", func(b *testing.B) {
		benchFullScan(b, func() iter.Seq2[kvstore.Entry, error] {
			return s.Scan(kvstore.IterOptions{Reverse: true, Borrow: true})
		})
	})
	b.Run("ReverseScan/baseline", func(b *testing.B) { benchFullScanSQL(b, reverse) })
}

// Names of the default column family's objects in the file (docs/format.md),
// for the database/sql replicas of the TTL paths.
const (
	sqlData   = `"default"`
	sqlView   = `"__snkv_view__default"`
	sqlKeys   = `"__snkv_ttl_k__default"`
	sqlExpiry = `"__snkv_ttl_e__default"`
)

// BenchmarkTTLGet measures what TTL costs reads. Two stores hold the same
// 100k plain keys in their default column family:
//   - Get/plain/snkv: a store that never used TTL (the reference);
//   - GetOtherCF/snkv: a store where another column family holds 100k keys
//     with a TTL (target: the same speed, at least 0.97×);
//   - GetLive/snkv: a live key of that other column family, whose keys all
//     have a TTL (target: at least 0.8× the reference).
//
// The /sql pairs run the very query snkv runs (through the column family's
// read view) with database/sql, to show what SQLite itself charges for the
// join with the key index.
func BenchmarkTTLGet(b *testing.B) {
	d := newBenchData(benchN)
	dir := b.TempDir()
	plain := benchOpenStore(b, dir, "plain.db", kvstore.Options{})
	benchLoad(b, plain.Default(), d, 0, benchN, 0)
	mixed := benchOpenStore(b, dir, "mixed.db", kvstore.Options{})
	benchLoad(b, mixed.Default(), d, 0, benchN, 0)
	exp, err := mixed.CreateColumnFamily("expiring")
	require.NoError(b, err)
	benchLoad(b, exp, d, 0, benchN, 24*time.Hour)
	require.True(b, exp.HasTTL())
	require.False(b, mixed.HasTTL())
	ctx := context.Background()
	for _, s := range []*kvstore.Store{plain, mixed} {
		_, err := s.Checkpoint(ctx, kvstore.CheckpointTruncate)
		require.NoError(b, err)
	}
	plainGet := benchPrepare(b, benchOpenSQL(b, dir, "plain.db", false),
		`SELECT value, expire_ms FROM `+sqlView+` WHERE key = ?`)
	liveGet := benchPrepare(b, benchOpenSQL(b, dir, "mixed.db", false),
		`SELECT value, expire_ms FROM "__snkv_view__expiring" WHERE key = ?`)

	run := func(name string, cf *kvstore.ColumnFamily) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := cf.Get(d.key(i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	runSQL := func(name string, st *sql.Stmt, withTTL bool) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var v, e []byte
			for i := 0; b.Loop(); i++ {
				if err := st.QueryRow(d.key(i)).Scan(&v, &e); err != nil || (e != nil) != withTTL {
					b.Fatal(err, e)
				}
			}
		})
	}
	run("Get/plain/snkv", plain.Default())
	run("GetOtherCF/snkv", mixed.Default())
	run("GetLive/snkv", exp)
	runSQL("Get/plain/sql", plainGet, false)
	runSQL("GetLive/sql", liveGet, true)
}

// benchWALFrames runs n calls of op after a checkpoint and returns the WAL
// frames (pages) they appended per call. n is small enough that no automatic
// checkpoint restarts the WAL meanwhile.
func benchWALFrames(b *testing.B, s *kvstore.Store, n int, op func(i int) error) float64 {
	b.Helper()
	ctx := context.Background()
	_, err := s.Checkpoint(ctx, kvstore.CheckpointTruncate)
	require.NoError(b, err)
	for i := range n {
		require.NoError(b, op(i))
	}
	res, err := s.Checkpoint(ctx, kvstore.CheckpointPassive)
	require.NoError(b, err)
	return float64(res.WALFrames) / float64(n)
}

// BenchmarkTTLPut compares Put on a column family without TTL with PutTTL
// (three rows per key) on one whose keys all have a TTL, both overwriting
// 100k preloaded keys in random order. Target: PutTTL at least 0.5× Put.
//
// Each reports walframes/op: the pages one call appends to the WAL, which is
// what a commit costs. The /sql pairs replay snkv's statements (one upsert;
// or a transaction of the upsert and the two index writes) through
// database/sql on the same tables.
func BenchmarkTTLPut(b *testing.B) {
	d := newBenchData(benchN)
	dir := b.TempDir()
	s := benchOpenStore(b, dir, "snkv.db", kvstore.Options{})
	benchLoad(b, s.Default(), d, 0, benchN, 0)
	exp, err := s.CreateColumnFamily("expiring")
	require.NoError(b, err)
	benchLoad(b, exp, d, 0, benchN, 24*time.Hour)
	db := benchOpenSQL(b, dir, "snkv.db", false)
	const (
		data   = `"expiring"`
		keys   = `"__snkv_ttl_k__expiring"`
		expiry = `"__snkv_ttl_e__expiring"`
	)
	plainPut := benchPrepare(b, db, `INSERT INTO `+sqlData+` (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`)
	ttlPut := []*sql.Stmt{
		benchPrepare(b, db, `INSERT INTO `+data+` (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`),
		benchPrepare(b, db, `INSERT OR REPLACE INTO `+keys+` (key, expire_ms) VALUES (?1, ?2)`),
		benchPrepare(b, db, `INSERT OR REPLACE INTO `+expiry+` (expire_ms, key) VALUES (?1, ?2)`),
	}
	buf := make([]byte, benchValueLen)
	sqlPutTTL := func(i int) error {
		k := d.key(i)
		exp := binary.BigEndian.AppendUint64(nil, uint64(time.Now().Add(24*time.Hour).UnixMilli()))
		tx, err := db.Begin()
		if err != nil {
			return err
		}
		_, err1 := tx.Stmt(ttlPut[0]).Exec(k, d.fresh(i, buf))
		_, err2 := tx.Stmt(ttlPut[1]).Exec(k, exp)
		_, err3 := tx.Stmt(ttlPut[2]).Exec(exp, k) // the format-2 expiry index: (expire_ms, key)
		if err := errors.Join(err1, err2, err3); err != nil {
			_ = tx.Rollback()
			return err
		}
		return tx.Commit()
	}
	put := func(i int) error { return s.Put(d.key(i), d.fresh(i, buf)) }
	putTTL := func(i int) error { return exp.PutTTL(d.key(i), d.fresh(i, buf), 24*time.Hour) }
	sqlPut := func(i int) error {
		_, err := plainPut.Exec(d.key(i), d.fresh(i, buf))
		return err
	}
	for _, c := range []struct {
		name string
		op   func(i int) error
	}{{"Put/snkv", put}, {"PutTTL/snkv", putTTL}, {"Put/sql", sqlPut}, {"PutTTL/sql", sqlPutTTL}} {
		b.Run(c.name, func(b *testing.B) {
			frames := benchWALFrames(b, s, 100, func(i int) error { return c.op(benchN - 1 - i) })
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := c.op(i); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(frames, "walframes/op")
		})
	}
}

// benchPurgeExpired is how many keys expire before every timed purge.
const benchPurgeExpired = 10_000

// purgeFixture is a store whose default column family holds live keys with
// a one-day TTL. Before each timed purge, expire adds benchPurgeExpired keys
// with a one-second TTL and moves the clock past their expiry.
type purgeFixture struct {
	s     *kvstore.Store
	db    *sql.DB // the same file through database/sql, for the baseline
	clk   *kvstore.ManualClock
	live  int
	batch kvstore.Batch
	value []byte
}

func newPurgeFixture(b *testing.B, live int) *purgeFixture {
	b.Helper()
	dir := b.TempDir()
	clk := kvstore.NewManualClock(time.Unix(1_700_000_000, 0))
	f := &purgeFixture{
		s:     benchOpenStore(b, dir, "purge.db", kvstore.Options{Clock: clk}),
		clk:   clk,
		live:  live,
		value: make([]byte, benchValueLen),
	}
	applyInBatches(b, f.s, live, func(batch *kvstore.Batch, i int) { batch.PutTTL(benchKey(i), f.value, 24*time.Hour) })
	_, err := f.s.Checkpoint(context.Background(), kvstore.CheckpointTruncate)
	require.NoError(b, err)
	f.db = benchOpenSQL(b, dir, "purge.db", false)
	return f
}

// expire writes, in one batch, the keys that are to expire and moves the
// clock past their expiry. Clustered keys sort after every live key (as
// keys with a time or sequence prefix do); spread keys sit evenly among the
// live keys, so deleting them dirties pages all over the tables.
func (f *purgeFixture) expire(b *testing.B, spread bool) {
	stride := max(1, f.live/benchPurgeExpired)
	for i := range benchPurgeExpired {
		k := fmt.Appendf(nil, "x%015d", i)
		if spread {
			k = benchMissKey(i * stride)
		}
		f.batch.PutTTL(k, f.value, time.Second)
	}
	if err := f.s.Apply(context.Background(), &f.batch); err != nil {
		b.Fatal(err)
	}
	f.batch.Reset()
	f.clk.Advance(2 * time.Second)
}

// purgeSQL is the baseline: the same expired keys removed by one transaction
// of three set-based DELETEs over the whole expired range of the expiry
// index, through database/sql.
func (f *purgeFixture) purgeSQL(stmts []*sql.Stmt) (int64, error) {
	bound := binary.BigEndian.AppendUint64(nil, uint64(f.clk.Now().UnixMilli()+1))
	tx, err := f.db.Begin()
	if err != nil {
		return 0, err
	}
	var removed int64
	for i, st := range stmts {
		res, err := tx.Stmt(st).Exec(bound)
		if err != nil {
			_ = tx.Rollback()
			return 0, err
		}
		if i == 1 {
			removed, _ = res.RowsAffected()
		}
	}
	return removed, tx.Commit()
}

// BenchmarkTTLPurge times PurgeExpired of 10k expired keys beside 10k and
// 100k (and with SNKV_BENCH_LARGE=1, 1M) live keys with a TTL, against the
// baseline of one set-based transaction (purgeSQL) on the same store. Targets:
// the same time whatever the live count (within 20%); at least 0.6× the
// baseline's rate. keys/s is expired keys removed per second.
func BenchmarkTTLPurge(b *testing.B) {
	lives := []int{10_000, 100_000}
	if os.Getenv("SNKV_BENCH_LARGE") != "" {
		lives = append(lives, 1_000_000)
	}
	// The expiry index of format 2 is (expire_ms, key); deleting the key
	// index rows first leaves the data table's DELETE trigger nothing to
	// clean up.
	const sel = `(SELECT key FROM ` + sqlExpiry + ` WHERE expire_ms < ?)`
	for _, live := range lives {
		f := newPurgeFixture(b, live)
		stmts := []*sql.Stmt{
			benchPrepare(b, f.db, `DELETE FROM `+sqlKeys+` WHERE key IN `+sel),
			benchPrepare(b, f.db, `DELETE FROM `+sqlData+` WHERE key IN `+sel),
			benchPrepare(b, f.db, `DELETE FROM `+sqlExpiry+` WHERE expire_ms < ?`),
		}
		ctx := context.Background()
		for _, layout := range []string{"clustered", "spread"} {
			for _, impl := range []string{"snkv", "baseline"} {
				b.Run(fmt.Sprintf("%s/live=%d/%s", layout, live, impl), func(b *testing.B) {
					b.ReportAllocs()
					for range b.N {
						b.StopTimer()
						f.expire(b, layout == "spread")
						b.StartTimer()
						var n int64
						var err error
						if impl == "snkv" {
							var m int
							m, err = f.s.PurgeExpired(ctx)
							n = int64(m)
						} else {
							n, err = f.purgeSQL(stmts)
						}
						if err != nil || n != benchPurgeExpired {
							b.Fatalf("purged %d keys (%v), want %d", n, err, benchPurgeExpired)
						}
					}
					b.StopTimer()
					reportKeys(b, b.N*benchPurgeExpired)
				})
			}
		}
	}
}

// benchFullScan times complete iterations of every key, checking the count.
// benchBatchPut applies batches of benchBatch fresh keys to s.
func benchBatchPut(b *testing.B, d *benchData, s *kvstore.Store) {
	bufs := freshBufs(benchBatch)
	b.ReportAllocs()
	ctx := context.Background()
	var batch kvstore.Batch
	for i := 0; b.Loop(); i++ {
		d.putBatch(&batch, i, bufs)
		if err := s.Apply(ctx, &batch); err != nil {
			b.Fatal(err)
		}
	}
	reportKeys(b, b.N*benchBatch)
}

// benchFullScanSQL is benchFullScan's baseline: st reads the benchN keys.
func benchFullScanSQL(b *testing.B, st *sql.Stmt) {
	b.ReportAllocs()
	cpu := startCPU()
	for b.Loop() {
		if n := scanSQL(b, st); n != benchN {
			b.Fatalf("scanned %d keys, want %d", n, benchN)
		}
	}
	reportKeys(b, b.N*benchN)
	cpu.report(b, b.N*benchN) // per key: cpu-ns/op is per row
}

func benchFullScan(b *testing.B, seq func() iter.Seq2[kvstore.Entry, error]) {
	b.ReportAllocs()
	cpu := startCPU()
	for b.Loop() {
		n := 0
		for _, err := range seq() {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != benchN {
			b.Fatalf("scanned %d keys, want %d", n, benchN)
		}
	}
	reportKeys(b, b.N*benchN)
	cpu.report(b, b.N*benchN) // per key: cpu-ns/op is per row
}

// withCPU is the sub-benchmark fn, reporting as well the process's CPU
// time per operation (cpu-ns/op): on a machine shared with other work the
// steadier figure, where wall time mostly measures the wait.
func withCPU(fn func(b *testing.B)) func(b *testing.B) {
	return func(b *testing.B) {
		cpu := startCPU()
		fn(b)
		cpu.report(b, b.N)
	}
}

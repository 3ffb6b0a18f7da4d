package timelog_test

import (
	"context"
	"encoding/binary"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

// Benchmarks compare the log with a baseline in the same run: the same
// records stored one row each in a column family (key = big-endian ts ‖
// seq, value = handle) through kvstore batches of 1,000. The data set has
// TIMELOG_BENCH_N records (default 1,000,000), timestamps 0..N-1 with 5%
// displaced back by 1..1,024 ticks. See docs/benchmarks.md.

func benchN() int {
	if s := os.Getenv("TIMELOG_BENCH_N"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return 1_000_000
}

// benchRecords returns n records in arrival order.
func benchRecords(n int) []timelog.Record {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]timelog.Record, n)
	for i := range out {
		ts := int64(i)
		if rng.IntN(20) == 0 {
			ts -= 1 + int64(rng.IntN(1024))
		}
		out[i] = timelog.Record{Ts: ts, Handle: uint64(i)}
	}
	return out
}

func baselineKey(dst []byte, ts int64, seq uint64) []byte {
	dst = binary.BigEndian.AppendUint64(dst[:0], uint64(ts)^(1<<63))
	return binary.BigEndian.AppendUint64(dst, seq)
}

func openBenchStore(b *testing.B, dir, name string) *kvstore.Store {
	db, err := kvstore.Open(filepath.Join(dir, name), kvstore.Options{})
	require.NoError(b, err)
	return db
}

func baselineInsert(b *testing.B, cf *kvstore.ColumnFamily, recs []timelog.Record, seq0 uint64) {
	var batch kvstore.Batch
	for i := 0; i < len(recs); i += 1000 {
		batch.Reset()
		for j, r := range recs[i:min(i+1000, len(recs))] {
			k := baselineKey(nil, r.Ts, seq0+uint64(i+j))
			batch.Put(k, binary.BigEndian.AppendUint64(nil, r.Handle))
		}
		require.NoError(b, cf.Apply(ctx, &batch))
	}
}

// nextBatch fills batch with the i-th 1,000 records of an endless stream:
// recs repeated, each repetition later in time than the one before.
func nextBatch(batch, recs []timelog.Record, i int) []timelog.Record {
	o := (i * 1000) % len(recs)
	shift := int64(i*1000/len(recs)) * int64(len(recs))
	for j, r := range recs[o : o+1000] {
		batch[j] = timelog.Record{Ts: r.Ts + shift, Handle: uint64(i*1000 + j)}
	}
	return batch
}

// BenchmarkIngest: sustained ingest in batches of 1,000, flushes included,
// until durable. One op is one batch of 1,000 records.
func BenchmarkIngest(b *testing.B) {
	recs := benchRecords(1_000_000)
	b.Run("timelog", func(b *testing.B) {
		db := openBenchStore(b, b.TempDir(), "tl.db")
		defer db.Close()
		l, err := timelog.Open(context.Background(), db, "bench", timelog.Options{Busy: timelog.BusySilent})
		require.NoError(b, err)
		batch := make([]timelog.Record, 1000)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			require.NoError(b, l.AppendBatch(nextBatch(batch, recs, i)))
		}
		endIngest(b, l)
	})
	b.Run("baseline", func(b *testing.B) {
		ingestBaseline(b, recs, func(cf *kvstore.ColumnFamily, batch []timelog.Record, seq0 uint64) {
			baselineInsert(b, cf, batch, seq0)
		})
	})
}

// ingestBaseline is the row-per-record side of an ingest benchmark: insert
// writes each batch of 1,000 records of the endless stream into a column
// family of a fresh store (seq0: the sequence number of its first record).
func ingestBaseline(b *testing.B, recs []timelog.Record, insert func(cf *kvstore.ColumnFamily, batch []timelog.Record, seq0 uint64)) {
	db := openBenchStore(b, b.TempDir(), "kv.db")
	defer db.Close()
	cf, err := db.CreateColumnFamily("rows")
	require.NoError(b, err)
	batch := make([]timelog.Record, 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		insert(cf, nextBatch(batch, recs, i), uint64(i*1000))
	}
	b.StopTimer()
	reportRecords(b)
}

// endIngest ends an ingest benchmark of b.N batches of 1,000 records: it
// flushes l within the timed run, reports records/s and closes l.
func endIngest(b *testing.B, l *timelog.Log) {
	b.Helper()
	require.NoError(b, l.Flush(ctx))
	b.StopTimer()
	reportRecords(b)
	require.NoError(b, l.Close())
}

// reportRecords reports the records/s of b.N batches of 1,000 records.
func reportRecords(b *testing.B) {
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkAppend: buffered Append, no flush in the timed loop.
func BenchmarkAppend(b *testing.B) {
	db, err := kvstore.Open("", kvstore.Options{})
	require.NoError(b, err)
	defer db.Close()
	const buf = 16 << 20
	l, err := timelog.Open(context.Background(), db, "bench", timelog.Options{Maintenance: timelog.Manual, MemtableMaxBytes: buf, Busy: timelog.BusySilent})
	require.NoError(b, err)
	per := buf / 24
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i > 0 && i%per == 0 {
			b.StopTimer()
			require.NoError(b, l.DeleteFrom(0)) // keep the log small: drop what is there
			require.NoError(b, l.Flush(ctx))
			b.StartTimer()
		}
		if err := l.Append(int64(i), uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	require.NoError(b, l.Close())
}

// readSet is the data set the read benchmarks share: the log compacted in
// one store, the baseline rows in another.
type readSet struct {
	n        int
	log      *timelog.Log
	logDB    *kvstore.Store
	rows     *kvstore.ColumnFamily
	rowsDB   *kvstore.Store
	tlBytes  float64 // on disk, per record
	rowBytes float64
}

var (
	readOnce sync.Once
	reads    *readSet
	readDir  string // the read set's files, removed by TestMain
)

// TestMain runs the package's tests and benchmarks, then closes and removes
// the read benchmarks' shared data set, if one was made.
func TestMain(m *testing.M) {
	code := m.Run()
	if reads != nil {
		_ = reads.log.Close()
		_ = reads.logDB.Close()
		_ = reads.rowsDB.Close()
	}
	if readDir != "" {
		_ = os.RemoveAll(readDir)
	}
	os.Exit(code)
}

func fileBytes(b *testing.B, db *kvstore.Store) int64 {
	_, err := db.Checkpoint(ctx, kvstore.CheckpointTruncate)
	require.NoError(b, err)
	fi, err := os.Stat(db.Path())
	require.NoError(b, err)
	return fi.Size()
}

func getReadSet(b *testing.B) *readSet {
	readOnce.Do(func() {
		dir, err := os.MkdirTemp("", "timelog-bench")
		require.NoError(b, err)
		readDir = dir
		n := benchN()
		recs := benchRecords(n)
		rs := &readSet{n: n}
		rs.logDB = openBenchStore(b, dir, "tl.db")
		rs.log, err = timelog.Open(context.Background(), rs.logDB, "bench", timelog.Options{Maintenance: timelog.Manual, Busy: timelog.BusySilent})
		require.NoError(b, err)
		for i := 0; i < n; i += 1000 {
			require.NoError(b, rs.log.AppendBatch(recs[i:min(i+1000, n)]))
			if i%100_000 == 0 {
				require.NoError(b, rs.log.Flush(ctx))
			}
		}
		require.NoError(b, rs.log.Flush(ctx))
		rs.log.Compact()
		for {
			did, err := rs.log.MaintStep(ctx)
			require.NoError(b, err)
			if !did {
				break
			}
		}
		rs.tlBytes = float64(fileBytes(b, rs.logDB)) / float64(n)
		rs.rowsDB = openBenchStore(b, dir, "kv.db")
		rs.rows, err = rs.rowsDB.CreateColumnFamily("rows")
		require.NoError(b, err)
		baselineInsert(b, rs.rows, recs, 0)
		rs.rowBytes = float64(fileBytes(b, rs.rowsDB)) / float64(n)
		reads = rs
	})
	return reads
}

// BenchmarkScan: one op is a full scan of the data set.
func BenchmarkScan(b *testing.B) {
	rs := getReadSet(b)
	report := func(b *testing.B) {
		b.ReportMetric(float64(rs.n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
	}
	b.Run("timelog-columns", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s, err := rs.log.Snapshot()
			require.NoError(b, err)
			n := 0
			for c, err := range s.ColumnsAll() {
				if err != nil {
					b.Fatal(err)
				}
				n += c.Len()
			}
			require.NoError(b, s.Close())
			require.Equal(b, rs.n, n)
		}
		report(b)
	})
	b.Run("timelog-all", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			require.Equal(b, rs.n, countAll(b, rs.log.All()))
		}
		report(b)
	})
	b.Run("baseline-rows", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			require.Equal(b, rs.n, countAll(b, rs.rows.All()))
		}
		report(b)
	})
	b.Run("bytes-per-record", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
		}
		b.ReportMetric(rs.tlBytes, "timelog-B/record")
		b.ReportMetric(rs.rowBytes, "baseline-B/record")
		b.ReportMetric(24, "buffer-B/record")
	})
}

// BenchmarkRange1000: a range of 1,000 records at a random place; reports
// the p50 and p99 latency of one range read.
func BenchmarkRange1000(b *testing.B) {
	rs := getReadSet(b)
	lat := func(b *testing.B, f func(t int64) int) {
		rng := rand.New(rand.NewPCG(3, 4))
		ds := make([]time.Duration, 0, b.N)
		for i := 0; i < b.N; i++ {
			t := int64(rng.IntN(rs.n - 2000))
			start := time.Now()
			n := f(t)
			ds = append(ds, time.Since(start))
			if n < 900 {
				b.Fatalf("range at %d returned %d records", t, n)
			}
		}
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-µs")
	}
	b.Run("timelog", func(b *testing.B) {
		lat(b, func(t int64) int { return countAll(b, rs.log.Range(t, t+1000)) })
	})
	b.Run("baseline", func(b *testing.B) {
		lo, hi := make([]byte, 16), make([]byte, 16)
		lat(b, func(t int64) int {
			lo = baselineKey(lo, t, 0)
			hi = baselineKey(hi, t+1000, 0)
			return countAll(b, rs.rows.Range(lo, hi))
		})
	})
}

// countAll counts the items of an iteration, failing the benchmark on an
// error.
func countAll[T any](b *testing.B, seq iter.Seq2[T, error]) int {
	b.Helper()
	n := 0
	for _, err := range seq {
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	return n
}

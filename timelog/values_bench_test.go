package timelog_test

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

// Values benchmarks: records with 100-byte values against the baseline
// storing the same records one row each in a column family (key = ts ‖ seq,
// value = handle ‖ the 100 bytes), batches of 1,000. See docs/benchmarks.md.

const benchValueSize = 100

func benchValue(dst []byte, i int) []byte {
	dst = dst[:0]
	for j := 0; j < benchValueSize; j++ {
		dst = append(dst, byte(i+j*7))
	}
	return dst
}

func benchValues() [][]byte {
	vs := make([][]byte, 1000)
	for i := range vs {
		vs[i] = benchValue(nil, i)
	}
	return vs
}

func baselineValueInsert(b *testing.B, cf *kvstore.ColumnFamily, recs []timelog.Record, vals [][]byte, seq0 uint64) {
	var batch kvstore.Batch
	for i := 0; i < len(recs); i += 1000 {
		batch.Reset()
		for j, r := range recs[i:min(i+1000, len(recs))] {
			v := binary.BigEndian.AppendUint64(make([]byte, 0, 8+benchValueSize), r.Handle)
			batch.Put(baselineKey(nil, r.Ts, seq0+uint64(i+j)), append(v, vals[(i+j)%len(vals)]...))
		}
		require.NoError(b, cf.Apply(ctx, &batch))
	}
}

// BenchmarkIngestValues: AppendValues of 100-byte values in batches of
// 1,000, flushes included, until durable. One op is 1,000 records.
func BenchmarkIngestValues(b *testing.B) {
	recs := benchRecords(1_000_000)
	vals := benchValues()
	ts := make([]int64, 1000)
	for _, blocks := range []struct {
		name  string
		bytes int
	}{{"timelog", 0}, {"timelog-blocks900", 900}} {
		b.Run(blocks.name, func(b *testing.B) {
			db := openBenchStore(b, b.TempDir(), "tl.db")
			defer db.Close()
			l, err := timelog.Open(context.Background(), db, "bench", timelog.Options{Values: true, ValueBlockBytes: blocks.bytes, Busy: timelog.BusySilent})
			require.NoError(b, err)
			batch := make([]timelog.Record, 1000)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j, r := range nextBatch(batch, recs, i) {
					ts[j] = r.Ts
				}
				_, err := l.AppendValues(ts, vals)
				require.NoError(b, err)
			}
			endIngest(b, l)
		})
	}
	b.Run("baseline", func(b *testing.B) {
		ingestBaseline(b, recs, func(cf *kvstore.ColumnFamily, batch []timelog.Record, seq0 uint64) {
			baselineValueInsert(b, cf, batch, vals, seq0)
		})
	})
}

// BenchmarkScanValues: a full range read of records with their values
// (n = min(TIMELOG_BENCH_N, 200,000), compacted). One op is one scan.
func BenchmarkScanValues(b *testing.B) {
	n := min(benchN(), 200_000)
	recs := benchRecords(n)
	vals := benchValues()
	b.Run("timelog", func(b *testing.B) {
		l, _ := loadValuesLog(b, recs, vals, 0)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			s, err := l.Snapshot()
			require.NoError(b, err)
			got, bytes := 0, 0
			for e, err := range s.AllValues() {
				require.NoError(b, err)
				got++
				bytes += len(e.Value)
			}
			require.NoError(b, s.Close())
			require.Equal(b, n, got)
			require.Equal(b, n*benchValueSize, bytes)
		}
		b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("baseline", func(b *testing.B) {
		db := openBenchStore(b, b.TempDir(), "kv.db")
		defer db.Close()
		cf, err := db.CreateColumnFamily("rows")
		require.NoError(b, err)
		baselineValueInsert(b, cf, recs, vals, 0)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			got, bytes := 0, 0
			for e, err := range cf.All() {
				require.NoError(b, err)
				got++
				bytes += len(e.Value) - 8
			}
			require.Equal(b, n, got)
			require.Equal(b, n*benchValueSize, bytes)
		}
		b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "records/s")
	})
}

// BenchmarkValueGet: Snapshot.Value of a random handle among n records
// (n = min(TIMELOG_BENCH_N, 200,000), compacted) against Get of the same
// value from a column family keyed by handle. One op is one look-up; the
// timelog side reports the process's CPU time per op beside the wall time.
func BenchmarkValueGet(b *testing.B) {
	n := min(benchN(), 200_000)
	recs := benchRecords(n)
	vals := benchValues()
	for _, blocks := range []struct {
		name  string
		bytes int
	}{{"timelog", 0}, {"timelog-blocks900", 900}} {
		b.Run(blocks.name, func(b *testing.B) {
			l, first := loadValuesLog(b, recs, vals, blocks.bytes)
			s, err := l.Snapshot()
			require.NoError(b, err)
			defer s.Close()
			b.ResetTimer()
			c := testutil.CPUTime()
			for i := 0; i < b.N; i++ {
				j := uint64(i*7919) % uint64(n)
				v, err := s.Value(first + j)
				require.NoError(b, err)
				require.Len(b, v, benchValueSize)
			}
			b.ReportMetric(float64((testutil.CPUTime()-c).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
	b.Run("baseline", func(b *testing.B) {
		db := openBenchStore(b, b.TempDir(), "kv.db")
		defer db.Close()
		cf, err := db.CreateColumnFamily("byhandle")
		require.NoError(b, err)
		var batch kvstore.Batch
		for i := 0; i < n; i += 1000 {
			batch.Reset()
			for j := i; j < min(i+1000, n); j++ {
				batch.Put(binary.BigEndian.AppendUint64(nil, uint64(j)), vals[j%len(vals)])
			}
			require.NoError(b, cf.Apply(ctx, &batch))
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			j := uint64(i*7919) % uint64(n)
			v, err := cf.Get(binary.BigEndian.AppendUint64(nil, j))
			require.NoError(b, err)
			require.Len(b, v, benchValueSize)
		}
	})
}

// BenchmarkValuesConvert: the writable Open that converts a values table
// of one row per value (100,000 values of 100 bytes, the layout before
// value blocks) to blocks, beside the flush that writes the same values as
// blocks in the first place. One op is one conversion (one flush).
func BenchmarkValuesConvert(b *testing.B) {
	const n = 100_000
	fill := func(l *timelog.Log) []uint64 {
		sizedValues(b, l, n, []int{benchValueSize})
		return nil
	}
	b.Run("convert", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			db := openBenchStore(b, b.TempDir(), "c.db")
			writeOldLayout(b, db, "c", fill)
			b.StartTimer()
			l, err := timelog.Open(context.Background(), db, "c", manual(timelog.Options{}))
			require.NoError(b, err)
			b.StopTimer()
			require.NoError(b, l.Close())
			require.NoError(b, db.Close())
			b.StartTimer()
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
	})
	b.Run("flush", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			db := openBenchStore(b, b.TempDir(), "f.db")
			l, err := timelog.Open(context.Background(), db, "f", manual(timelog.Options{Values: true, MemtableMaxBytes: 64 << 20}))
			require.NoError(b, err)
			fill(l)
			b.StartTimer()
			require.NoError(b, l.Flush(ctx))
			b.StopTimer()
			require.NoError(b, l.Close())
			require.NoError(b, db.Close())
			b.StartTimer()
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "values/s")
	})
}

// loadValuesLog opens a values log in a fresh store (both closed at the
// end of b), with value blocks of blockBytes (0: the default), appends
// recs with vals in batches of 1,000 and compacts it. It returns the log
// and the first handle.
func loadValuesLog(b *testing.B, recs []timelog.Record, vals [][]byte, blockBytes int) (*timelog.Log, uint64) {
	db := openBenchStore(b, b.TempDir(), "tl.db")
	b.Cleanup(func() { _ = db.Close() })
	l, err := timelog.Open(context.Background(), db, "bench", timelog.Options{Values: true, ValueBlockBytes: blockBytes, Maintenance: timelog.Manual, Busy: timelog.BusySilent})
	require.NoError(b, err)
	b.Cleanup(func() { _ = l.Close() })
	ts := make([]int64, 0, 1000)
	var first uint64
	for i := 0; i < len(recs); i += 1000 {
		ts = ts[:0]
		for _, r := range recs[i:min(i+1000, len(recs))] {
			ts = append(ts, r.Ts)
		}
		h, err := l.AppendValues(ts, vals[:len(ts)])
		require.NoError(b, err)
		if i == 0 {
			first = h
		}
	}
	compactAll(b, l)
	// Reads of pages still in the WAL take another path (and about three
	// times the CPU) than reads of the database file: the figures must not
	// depend on how far the store's background checkpoint got.
	_, err = db.Checkpoint(ctx, kvstore.CheckpointTruncate)
	require.NoError(b, err)
	return l, first
}

package timelog_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/timelog"
)

// The C engine's workload (docs/benchmarks.md, "Timelog"):
// TIMELOG_NATIVE_N records (default 5,000,000) in batches of 4,096,
// timestamps 1, 2, 3, ... with 5% of the records after the first 1,024
// moved back by 1..1,024 ticks, handles 1, 2, 3, ...; the same xorshift
// stream and seed as the C program, so both sides ingest the same records.
// The log has a 16 MiB write buffer and manual maintenance, with the
// default busy policy: a write that finds the sealed queue full flushes
// its oldest buffer. The ingest time includes the final durable Flush.
// Then one snapshot is scanned since math.MinInt64 with the record
// iterator and with Columns.

func nativeN() int {
	if s := os.Getenv("TIMELOG_NATIVE_N"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return 5_000_000
}

// nativeStream generates the C benchmark's records batch by batch.
type nativeStream struct {
	rng     uint64
	cursor  int64
	emitted int
}

func (s *nativeStream) xorshift() uint64 {
	x := s.rng
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	s.rng = x
	return x
}

func (s *nativeStream) uniform() float64 {
	return float64(s.xorshift()>>11) * (1.0 / 9007199254740992.0)
}

// fill writes the next len(batch) records into batch.
func (s *nativeStream) fill(batch []timelog.Record) {
	for i := range batch {
		s.cursor++
		ts := s.cursor
		if s.emitted+i > 1024 && s.uniform() < 0.05 {
			if back := 1 + s.xorshift()%1024; uint64(ts) > back {
				ts -= int64(back)
			}
		}
		batch[i] = timelog.Record{Ts: ts, Handle: uint64(s.emitted + i + 1)}
	}
	s.emitted += len(batch)
}

// nativeShape is a variant of the workload's records for the size report.
type nativeShape int

const (
	shapeNative        nativeShape = iota // the C workload
	shapeRandomTs                         // random 63-bit timestamps
	shapeRandomHandles                    // random 64-bit handles
)

// nativeIngest runs the ingest of n records of shape into a fresh store and
// returns the log, its store file size per record and the ingest time.
func nativeIngest(b *testing.B, n int, shape nativeShape) (*timelog.Log, float64, time.Duration, time.Duration, func()) {
	db := openBenchStore(b, b.TempDir(), "native.db")
	l, err := timelog.Open(context.Background(), db, "native", timelog.Options{
		Maintenance: timelog.Manual, MemtableMaxBytes: 16 << 20,
	})
	require.NoError(b, err)
	s := &nativeStream{rng: 12345}
	rng := rand.New(rand.NewPCG(5, 6))
	batch := make([]timelog.Record, 4096)
	start, cpu := time.Now(), testutil.CPUTime()
	for s.emitted < n {
		k := min(len(batch), n-s.emitted)
		s.fill(batch[:k])
		switch shape {
		case shapeRandomTs:
			for i := range batch[:k] {
				batch[i].Ts = int64(rng.Uint64() >> 1)
			}
		case shapeRandomHandles:
			for i := range batch[:k] {
				batch[i].Handle = rng.Uint64()
			}
		}
		if err := l.AppendBatch(batch[:k]); err != nil {
			b.Fatal(err)
		}
	}
	require.NoError(b, l.Flush(ctx))
	took, cpuTook := time.Since(start), testutil.CPUTime()-cpu
	size := float64(fileBytes(b, db)) / float64(n)
	return l, size, took, cpuTook, func() { _ = l.Close(); _ = db.Close() }
}

// BenchmarkNative: one op is the whole workload (run it with -benchtime
// 1x). Reports ingest and scan rates and the bytes on disk per record for
// the workload and for random timestamps or handles; the cpu- rates divide
// by the process's CPU time instead of wall time (on a busy machine they
// say what the code costs; the wall rates compare with the C program).
func BenchmarkNative(b *testing.B) {
	n := nativeN()
	b.Run("workload", func(b *testing.B) {
		var ingest, scanAll, scanCols, size, cpuIngest, cpuAll, cpuCols float64
		for i := 0; i < b.N; i++ {
			l, sz, took, cpu, done := nativeIngest(b, n, shapeNative)
			size = sz
			ingest += float64(n) / took.Seconds()
			cpuIngest += float64(n) / cpu.Seconds()
			runtime.GC() // no collection left over from the ingest lands in the scans
			snap, err := l.Snapshot()
			require.NoError(b, err)
			start, c := time.Now(), testutil.CPUTime()
			got := 0
			for _, err := range snap.Since(math.MinInt64) {
				if err != nil {
					b.Fatal(err)
				}
				got++
			}
			scanAll += float64(got) / time.Since(start).Seconds()
			cpuAll += float64(got) / (testutil.CPUTime() - c).Seconds()
			require.Equal(b, n, got)
			start, c = time.Now(), testutil.CPUTime()
			got = 0
			for c, err := range snap.ColumnsAll() {
				if err != nil {
					b.Fatal(err)
				}
				got += c.Len()
			}
			scanCols += float64(got) / time.Since(start).Seconds()
			cpuCols += float64(got) / (testutil.CPUTime() - c).Seconds()
			require.Equal(b, n, got)
			require.NoError(b, snap.Close())
			done()
		}
		b.ReportMetric(ingest/float64(b.N), "ingest-records/s")
		b.ReportMetric(scanAll/float64(b.N), "since-records/s")
		b.ReportMetric(scanCols/float64(b.N), "columns-records/s")
		b.ReportMetric(cpuIngest/float64(b.N), "cpu-ingest-records/s")
		b.ReportMetric(cpuAll/float64(b.N), "cpu-since-records/s")
		b.ReportMetric(cpuCols/float64(b.N), "cpu-columns-records/s")
		b.ReportMetric(size, "B/record")
	})
	for _, v := range []struct {
		name  string
		shape nativeShape
	}{{"random-ts", shapeRandomTs}, {"random-handles", shapeRandomHandles}} {
		b.Run(v.name, func(b *testing.B) {
			var size float64
			for i := 0; i < b.N; i++ {
				_, sz, _, _, done := nativeIngest(b, min(n, 1_000_000), v.shape)
				size = sz
				done()
			}
			b.ReportMetric(size, "B/record")
		})
	}
}

// BenchmarkNativeMemory reports the memory one flush of a full 16 MiB
// buffer of the workload allocates (one op: the flush), and what opening
// and closing a snapshot over the flushed log and a half-full buffer
// allocates (one op: Snapshot and Close; the first snapshot, which also
// sorts the buffer, is reported apart).
func BenchmarkNativeMemory(b *testing.B) {
	const per = 16 << 20 / 24 // records in a full buffer
	db := openBenchStore(b, b.TempDir(), "mem.db")
	defer db.Close()
	l, err := timelog.Open(context.Background(), db, "mem", timelog.Options{Maintenance: timelog.Manual, MemtableMaxBytes: 16 << 20, Busy: timelog.BusySilent})
	require.NoError(b, err)
	defer l.Close()
	s := &nativeStream{rng: 12345}
	batch := make([]timelog.Record, 4096)
	fill := func(n int) {
		for k := 0; k < n; k += len(batch) {
			m := min(len(batch), n-k)
			s.fill(batch[:m])
			require.NoError(b, l.AppendBatch(batch[:m]))
		}
	}
	b.Run("flush", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			fill(per - 4096)
			b.StartTimer()
			require.NoError(b, l.Flush(ctx))
		}
	})
	fill(per / 2)
	// The first snapshot after a write makes the buffer's sorted view
	// (shared until the next write): reported apart.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	snap, err := l.Snapshot()
	require.NoError(b, err)
	runtime.ReadMemStats(&after)
	require.NoError(b, snap.Close())
	first := float64(after.TotalAlloc - before.TotalAlloc)
	b.Run("snapshot", func(b *testing.B) {
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			snap, err := l.Snapshot()
			require.NoError(b, err)
			require.NoError(b, snap.Close())
		}
		b.ReportMetric(first, "first-snapshot-B")
	})
}

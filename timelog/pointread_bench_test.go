package timelog_test

import (
	"math/rand/v2"
	"testing"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/stretchr/testify/require"
)

// BenchmarkPointReads: one op is one point read on an open snapshot of the
// compacted read set (TIMELOG_BENCH_N records): Min, Max, Next and Prev
// at a random timestamp, and a Range over about 10 records; LogMax is
// Log.Max, which takes and closes a snapshot of its own each call. It
// reports the process's CPU time per op beside the wall time.
func BenchmarkPointReads(b *testing.B) {
	rs := getReadSet(b)
	s, err := rs.log.Snapshot()
	require.NoError(b, err)
	defer s.Close()
	rng := rand.New(rand.NewPCG(9, 10))
	at := func() int64 { return int64(rng.IntN(rs.n - 20)) }
	run := func(name string, f func(b *testing.B)) {
		b.Run(name, func(b *testing.B) {
			c := testutil.CPUTime()
			f(b)
			b.ReportMetric(float64((testutil.CPUTime()-c).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
	run("Min", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, ok, err := s.Min(); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	run("Max", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, ok, err := s.Max(); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	run("LogMax", func(b *testing.B) { // a fresh snapshot per call
		for i := 0; i < b.N; i++ {
			if _, ok, err := rs.log.Max(); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	run("Next", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, ok, err := s.Next(at()); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	run("Prev", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, ok, err := s.Prev(at() + 10); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	run("Range10", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			t := at()
			if countAll(b, s.Range(t, t+10)) == 0 {
				b.Fatal("empty range")
			}
		}
	})
}

package timelog_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkPointReads: one op is one point read on an open snapshot of the
// compacted read set (TIMELOG_BENCH_N records): Min, Max, Next and Prev
// at a random timestamp, and a Range over about 10 records.
func BenchmarkPointReads(b *testing.B) {
	rs := getReadSet(b)
	s, err := rs.log.Snapshot()
	require.NoError(b, err)
	defer s.Close()
	rng := rand.New(rand.NewPCG(9, 10))
	at := func() int64 { return int64(rng.IntN(rs.n - 20)) }
	b.Run("Min", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, ok, err := s.Min(); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("Max", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, ok, err := s.Max(); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("Next", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, ok, err := s.Next(at()); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("Prev", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, ok, err := s.Prev(at() + 10); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("Range10", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			t := at()
			n := 0
			for _, err := range s.Range(t, t+10) {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n == 0 {
				b.Fatal("empty range")
			}
		}
	})
}

package timelog

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sortedRef is what a buffer's sorted view must be: its records by (ts, seq).
func sortedRef(recs []rec) []rec {
	out := slices.Clone(recs)
	slices.SortFunc(out, cmpRec)
	return out
}

// TestSortLate: the radix sort (and the comparison sort it falls back to)
// is a stable sort by timestamp of records in sequence order, for every
// spread of timestamps, with its scratch reused or not.
func TestSortLate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var tmp []rec
	for _, n := range []int{0, 1, 2, 255, 256, 257, 1000, 5000} {
		for _, spread := range []uint64{1, 7, 1 << 11, 1<<11 + 1, 1 << 22, 1 << 33, 1 << 55, 1 << 56, math.MaxUint64} {
			recs := make([]rec, n)
			base := int64(rng.Uint64())
			for i := range recs {
				recs[i] = rec{ts: base + int64(rng.Uint64()%spread), seq: uint64(i + 1), h: rng.Uint64()}
			}
			if spread == math.MaxUint64 && n > 1 {
				recs[0].ts, recs[1].ts = math.MinInt64, math.MaxInt64
			}
			want := sortedRef(recs)
			var got []rec
			got, tmp = sortLate(recs, tmp)
			require.Equal(t, want, got, "n %d spread %d", n, spread)
		}
	}
}

// TestMergeInto: merging into a new array and into a's own spare capacity
// gives the sorted union, equal timestamps ordered by sequence number.
func TestMergeInto(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		var a, b []rec
		seq := uint64(0)
		ts := int64(rng.IntN(5))
		for range rng.IntN(200) {
			seq++
			x := rec{ts: ts + int64(rng.IntN(3)), seq: seq}
			if len(a) == 0 || x.ts >= a[len(a)-1].ts {
				a = append(a, x)
				ts = x.ts
			} else {
				b = append(b, x)
			}
			if rng.IntN(4) == 0 {
				seq++
				b = append(b, rec{ts: ts - int64(rng.IntN(10)), seq: seq})
			}
		}
		b, _ = sortLate(b, nil)
		want := sortedRef(append(slices.Clone(a), b...))
		if len(want) == 0 {
			continue
		}
		require.Equal(t, want, mergeInto(make([]rec, len(a)+len(b)), a, b))
		inPlace := slices.Grow(slices.Clone(a), len(b))
		require.Equal(t, want, mergeInto(inPlace[:len(a)+len(b)], inPlace[:len(a)], b))
	}
}

// TestMemtableViewsAndSeals drives buffers as the log does, with views
// taken at random points and arrays handed from buffer to buffer: every
// view and every sealed run stays the sorted contents of its moment, even
// after the arrays it does not own are written again.
func TestMemtableViewsAndSeals(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	type held struct {
		r    *run
		want []rec
	}
	var keep []held
	var free arrays
	seq := uint64(0)
	for round := range 60 {
		m := newMemtable(64, free)
		var all []rec
		back := 8 // how late a record may be; none in every third round
		if round%3 == 0 {
			back = 1
		}
		for range rng.IntN(300) {
			switch rng.IntN(6) {
			case 0:
				keep = append(keep, held{m.snapshot(0), sortedRef(all)})
			case 1:
				batch := make([]Record, rng.IntN(50))
				for i := range batch {
					batch[i] = Record{Ts: int64(len(all) + i - rng.IntN(back)), Handle: rng.Uint64()}
				}
				if need := m.records() + len(batch); need > cap(m.recs) {
					m.recs = growRecs(m.recs, len(batch))
				}
				m.addBatch(batch, seq)
				for i, r := range batch {
					all = append(all, rec{ts: r.Ts, seq: seq + uint64(i) + 1, h: r.Handle})
				}
				seq += uint64(len(batch))
			default:
				seq++
				x := rec{ts: int64(len(all) - rng.IntN(back)), seq: seq, h: rng.Uint64()}
				if round%7 == 0 {
					x.ts = int64(rng.Uint64()) // timestamps over all 64 bits
				}
				m.add(x)
				all = append(all, x)
			}
		}
		r, f := m.seal(uint64(round))
		require.Equal(t, sortedRef(all), append([]rec(nil), r.recs...), "round %d", round)
		if len(all) > 0 {
			require.Equal(t, all[0].seq, r.minSeq)
		}
		keep = append(keep, held{r, sortedRef(all)})
		free = f
		if free.recs == nil && r.buf != nil && rng.IntN(2) == 0 {
			free.recs = r.buf // as a flush recycles an owned run
			keep = keep[:len(keep)-1]
		}
		if round%10 == 9 {
			for _, h := range keep {
				require.Equal(t, h.want, append([]rec(nil), h.r.recs...), "round %d: a held view or run changed", round)
			}
		}
	}
}

// nativeLike returns n records of the C engine's workload shape: timestamps
// 1, 2, 3, ... with 5% moved back by 1..1,024, handles 1, 2, 3, ...
func nativeLike(n int) []Record {
	rng := rand.New(rand.NewPCG(12345, 0))
	out := make([]Record, n)
	for i := range out {
		ts := int64(i + 1)
		if i > 1024 && rng.IntN(20) == 0 {
			ts -= int64(1 + rng.IntN(1024))
		}
		out[i] = Record{Ts: ts, Handle: uint64(i + 1)}
	}
	return out
}

// BenchmarkBuffer: a 16 MiB buffer of the C workload's records appended in
// batches of 4,096 and sealed (sorted), the arrays handed on as the log
// does; then its pages encoded. One op is one buffer; ns/record per part.
func BenchmarkBuffer(b *testing.B) {
	const n = 16 << 20 / recSize
	recs := nativeLike(n)
	var free arrays
	var sealed *run
	b.Run("append+seal", func(b *testing.B) {
		var appendNs, sealNs int64
		for i := 0; i < b.N; i++ {
			m := newMemtable(n, free)
			start := time.Now()
			for k := 0; k < n; k += 4096 {
				m.addBatch(recs[k:min(k+4096, n)], uint64(k))
			}
			mid := time.Now()
			sealed, free = m.seal(1)
			appendNs += mid.Sub(start).Nanoseconds()
			sealNs += time.Since(mid).Nanoseconds()
			free.recs = sealed.buf // as a flush recycles it
		}
		b.ReportMetric(float64(appendNs)/float64(b.N*n), "append-ns/record")
		b.ReportMetric(float64(sealNs)/float64(b.N*n), "seal-ns/record")
	})
	b.Run("encode", func(b *testing.B) {
		m := newMemtable(n, arrays{})
		for k := 0; k < n; k += 4096 {
			m.addBatch(recs[k:min(k+4096, n)], uint64(k))
		}
		sorted, _ := m.seal(1)
		var e pageEncoder
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for rs := sorted.recs; len(rs) > 0; {
				_, _, k := e.encode(rs, 16<<10)
				rs = rs[k:]
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
	})
}

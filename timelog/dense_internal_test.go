package timelog

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// denseRecs returns n sorted records: mostly growing timestamps and
// sequence numbers with late ones, or (wild) any 64-bit values.
func denseRecs(rng *rand.Rand, n int, wild bool) []rec {
	recs := make([]rec, n)
	for i := range recs {
		r := rec{ts: int64(i / 2), seq: uint64(i + 1), h: uint64(i + 1)}
		if rng.IntN(20) == 0 {
			r.ts -= int64(rng.IntN(1024))
		}
		if wild {
			r = rec{ts: int64(rng.Uint64()), seq: rng.Uint64(), h: rng.Uint64()}
			switch rng.IntN(10) {
			case 0:
				r.ts = math.MinInt64
			case 1:
				r.ts = math.MaxInt64
			case 2:
				r.h = math.MaxUint64
			}
		}
		recs[i] = r
	}
	slices.SortFunc(recs, cmpRec)
	return recs
}

// Dense pages hold exactly the records given, cut by bytes (at least one
// record a page, none above the limit unless it is a lone record), and a
// decode of a span, or of its first or last record, starting from the
// block index, gives what the whole page clipped to the span gives.
func TestDensePageRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var e pageEncoder
	for iter := range 300 {
		wild := iter%3 == 0
		recs := denseRecs(rng, 1+rng.IntN(3000), wild)
		maxBytes := denseMinPage + rng.IntN(20000)
		var got []rec
		for rest := recs; len(rest) > 0; {
			b, p, n := e.encode(rest, maxBytes)
			require.Positive(t, n)
			require.True(t, len(b) <= maxBytes || n == 1, "%d bytes, limit %d", len(b), maxBytes)
			require.Equal(t, rest[0].ts, p.minTs)
			require.Equal(t, rest[n-1].ts, p.maxTs)
			k, err := checkPage(b, p.n)
			require.NoError(t, err)
			require.Equal(t, n, k)
			page, err := decodeDense(nil, b, n, fullSpan, denseAll)
			require.NoError(t, err)
			require.Equal(t, rest[:n], page)
			got = append(got, page...)
			for range 5 {
				lo := page[rng.IntN(n)].ts - int64(rng.IntN(3))
				hi := lo + int64(rng.IntN(600))
				if hi < lo {
					hi = math.MaxInt64
				}
				q := span{lo, hi}
				want := clipRecs(page, q)
				all, err := decodeDense(nil, b, n, q, denseAll)
				require.NoError(t, err)
				require.Equal(t, len(want), len(all))
				if len(want) > 0 {
					require.Equal(t, want, all)
				}
				first, err := decodeDense(nil, b, n, q, denseFirst)
				require.NoError(t, err)
				last, err := decodeDense(nil, b, n, q, denseLast)
				require.NoError(t, err)
				if len(want) == 0 {
					require.Empty(t, first)
					require.Empty(t, last)
					continue
				}
				require.Equal(t, []rec{want[0]}, first)
				require.Equal(t, []rec{want[len(want)-1]}, last)
			}
			rest = rest[n:]
		}
		require.Equal(t, recs, got)
	}
}

// A page whose block index disagrees with its records is corrupt to a
// whole-page decode (IntegrityCheck, compaction, scans), even with a
// checksum recomputed to match.
func TestDensePageIndexChecked(t *testing.T) {
	recs := denseRecs(rand.New(rand.NewPCG(1, 1)), 1000, false)
	var e pageEncoder
	b, p, n := e.encode(recs, 1<<20)
	require.Equal(t, 1000, n)
	d, err := parseDense(b, n)
	require.NoError(t, err)
	require.Equal(t, 3, d.entries())
	idx := len(b) - len(d.idx)
	for _, off := range []int{0, 8, 16, 24, 28, 32, denseEntry + 3} {
		bad := slices.Clone(b)
		bad[idx+off] ^= 1
		be.PutUint32(bad[4:], pageSum(bad))
		_, err := decodeDense(nil, bad, p.n, fullSpan, denseAll)
		require.ErrorIs(t, err, ErrCorrupt, "index byte %d", off)
	}
}

func BenchmarkDecodeDensePage(b *testing.B) {
	recs := denseRecs(rand.New(rand.NewPCG(1, 1)), 8000, false)
	var e pageEncoder
	pg, p, n := e.encode(recs, 16<<10)
	b.Logf("%d records, %d bytes", n, len(pg))
	var dst []rec
	b.Run("all", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var err error
			if dst, err = decodeDense(dst[:0], pg, p.n, fullSpan, denseAll); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
	})
	b.Run("last", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var err error
			if dst, err = decodeDense(dst[:0], pg, p.n, fullSpan, denseLast); err != nil || len(dst) != 1 {
				b.Fatal(err)
			}
		}
	})
}

// A flush of more records than pipelineMin encodes its pages in a
// goroutine ahead of the stores: the pages are the ones a plain loop
// writes, in order, with consecutive ids.
func TestAddPagesPipelined(t *testing.T) {
	recs := denseRecs(rand.New(rand.NewPCG(3, 3)), pipelineMin*3, false)
	c := &config{Options: Options{PageMaxBytes: 4096}}
	var e pageEncoder
	var want [][]byte
	for rest := recs; len(rest) > 0; {
		b, _, n := e.encode(rest, c.PageMaxBytes)
		want = append(want, b)
		rest = rest[n:]
	}
	require.Greater(t, len(want), 10)
	var got [][]byte
	require.NoError(t, encodeAhead(recs, c, func(e encoded) error {
		got = append(got, e.b)
		return nil
	}))
	require.Equal(t, want, got)

	// An error from a store stops the encoder and comes back.
	boom := errors.New("boom")
	calls := 0
	err := encodeAhead(recs, c, func(encoded) error {
		calls++
		if calls == 3 {
			return boom
		}
		return nil
	})
	require.ErrorIs(t, err, boom)
	require.Equal(t, 3, calls)
}

// Every flip of any byte of a dense page holding a block index (all 8 bits
// of it) fails the page's checks.
func TestDensePageEveryByteFlip(t *testing.T) {
	recs := denseRecs(rand.New(rand.NewPCG(5, 5)), 700, false)
	recs = append(recs, rec{ts: math.MaxInt64, seq: math.MaxUint64, h: math.MaxUint64})
	var e pageEncoder
	b, p, n := e.encode(recs, 1<<20)
	require.Equal(t, len(recs), n)
	for i := range b {
		bad := slices.Clone(b)
		bad[i] ^= 0xFF
		_, err := decodePage(nil, bad, p.n, "flip", nil)
		require.ErrorIs(t, err, ErrCorrupt, "byte %d", i)
	}
}

// No byte string makes the dense decoder panic or loop: it returns records
// or ErrCorrupt. (The checksum is recomputed so the decoder itself is
// what the bytes reach.)
func FuzzDensePage(f *testing.F) {
	var e pageEncoder
	for _, wild := range []bool{false, true} {
		recs := denseRecs(rand.New(rand.NewPCG(6, 6)), 600, wild)
		b, _, _ := e.encode(recs, 1<<20)
		f.Add(b[pageHeader:])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		b := append([]byte("TLP\x03\x00\x00\x00\x00"), body...)
		be.PutUint32(b[4:], pageSum(b))
		n := -1
		if len(b) >= denseHeader {
			n = int(be.Uint32(b[8:]))
		}
		for _, mode := range []denseMode{denseAll, denseFirst, denseLast} {
			_, err := decodePageSpan(nil, b, n, "fuzz", nil, span{-5, 1000}, mode)
			if err != nil {
				require.ErrorIs(t, err, ErrCorrupt)
			}
		}
		if _, err := decodePage(nil, b, n, "fuzz", nil); err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
		}
	})
}

// Random damage to a dense page's body, checksum recomputed: the decoder
// gives ErrCorrupt or records, never a panic (FuzzDensePage, in a loop).
func TestDensePageRandomBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	var e pageEncoder
	for iter := range 3000 {
		recs := denseRecs(rng, 1+rng.IntN(700), iter%2 == 0)
		b, p, _ := e.encode(recs, 1<<20)
		bad := slices.Clone(b)
		for range 1 + rng.IntN(4) {
			bad[pageHeader+rng.IntN(len(bad)-pageHeader)] = byte(rng.Uint32())
		}
		if rng.IntN(4) == 0 {
			bad = bad[:pageHeader+rng.IntN(len(bad)-pageHeader)]
		}
		be.PutUint32(bad[4:], pageSum(bad))
		for _, mode := range []denseMode{denseAll, denseFirst, denseLast} {
			if _, err := decodePageSpan(nil, bad, p.n, "rand", nil, span{recs[0].ts, recs[len(recs)/2].ts}, mode); err != nil {
				require.ErrorIs(t, err, ErrCorrupt)
			}
		}
	}
}

package vector_test

import (
	"math"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/stretchr/testify/require"
)

// TestHugeKAndEfAreBoundedByTheIndex: a K, Ef or Oversample far beyond the
// index's size asks for every vector, never for memory in proportion to
// the number (a K of math.MaxInt made a slice of that capacity and
// panicked; K times Oversample overflowed to a negative count and the
// search returned nothing).
func TestHugeKAndEfAreBoundedByTheIndex(t *testing.T) {
	db, _ := tempStore(t, kvstore.Options{})
	for _, st := range []vector.Storage{vector.F32, vector.Int8} {
		ix := openIndex(t, db, "v"+st.String(), vector.Options{Dim: 2, Storage: st})
		require.NoError(t, ix.PutBatch(ctx, []vector.Item{
			{Key: []byte("a"), Vector: []float32{1, 0}},
			{Key: []byte("b"), Vector: []float32{0, 1}},
			{Key: []byte("c"), Vector: []float32{1, 1}},
		}))
		for _, q := range []vector.Query{
			{K: math.MaxInt},
			{K: math.MaxInt/2 + 1},
			{K: math.MaxInt>>8 + 1, Oversample: 1 << 30},
			{K: 3, Ef: math.MaxInt},
			{K: 3, Oversample: math.MaxInt},
			{K: math.MaxInt, Where: map[string]string{}, Prefix: []byte{}},
			{K: math.MaxInt, Filter: func([]byte) bool { return true }},
		} {
			hits, err := ix.Search(ctx, []float32{1, 0}, q)
			require.NoError(t, err, "%s %+v", st, q)
			require.Equal(t, []string{"a", "c", "b"}, hitKeys(hits), "%s %+v", st, q)
			err = db.View(ctx, func(tx *kvstore.Tx) error {
				hits, err := ix.In(tx).Search([]float32{1, 0}, q)
				require.NoError(t, err)
				require.Equal(t, []string{"a", "c", "b"}, hitKeys(hits), "in a transaction: %s %+v", st, q)
				return nil
			})
			require.NoError(t, err)
		}
	}
}

// TestOversizedRowWritesNothing: a batch whose item's value (with its
// metadata) is over the store's MaxValueSize, or an index whose packed
// vector rows are, fails before writing anything, so a caller that goes on
// and commits its transaction commits none of the batch (the first items
// were written before the oversized one failed).
func TestOversizedRowWritesNothing(t *testing.T) {
	db, _ := tempStore(t, kvstore.Options{MaxValueSize: 64 << 10})
	ix := openIndex(t, db, "v", vector.Options{Dim: 2})
	big := make([]byte, 64<<10)
	for _, items := range [][]vector.Item{
		{{Key: []byte("ok"), Vector: []float32{1, 0}}, {Key: []byte("big"), Vector: []float32{0, 1}, Put: vector.Put{Value: big}}},
		{{Key: []byte("ok"), Vector: []float32{1, 0}}, {Key: []byte("meta"), Vector: []float32{0, 1}, Put: vector.Put{Meta: map[string]string{"m": string(big)}}}},
	} {
		var perr error
		require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
			perr = ix.In(tx).PutBatch(items)
			return nil // the caller commits all the same
		}))
		require.ErrorIs(t, perr, kvstore.ErrValueTooLarge)
		ok, err := ix.Contains(ctx, []byte("ok"))
		require.NoError(t, err)
		require.False(t, ok, "a refused batch wrote its first item")
		n, err := ix.Count(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
	}
	require.NoError(t, ix.Put(ctx, []byte("ok"), []float32{1, 0}, vector.Put{Value: big[:60<<10]}), "under the limit")

	// 384 dimensions pack 8 vectors to a row of 12 KiB: over a limit of 4 KiB.
	small := openStore(t, t.TempDir()+"/s.db", kvstore.Options{MaxValueSize: 4 << 10})
	wide := openIndex(t, small, "w", vector.Options{Dim: 384})
	var perr error
	require.NoError(t, small.Update(ctx, func(tx *kvstore.Tx) error {
		perr = wide.In(tx).Put([]byte("a"), make([]float32, 384), vector.Put{})
		return nil
	}))
	require.ErrorIs(t, perr, kvstore.ErrValueTooLarge)
	n, err := wide.Count(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	var keys int
	require.NoError(t, small.View(ctx, func(tx *kvstore.Tx) error {
		for _, err := range wide.In(tx).Scan(kvstore.IterOptions{}) {
			require.NoError(t, err)
			keys++
		}
		return nil
	}))
	require.Zero(t, keys, "a refused put left a key row")
}

// TestExpiryRoundsUpAndStaysInRange: expiries follow the store's rules: a
// TTL or expiry time below a millisecond rounds up (a TTL of 1ns made a
// vector that no read ever saw), an expiry past the latest one a file
// holds is refused (a far ExpireAt overflowed to an expiry in the past:
// the put succeeded and the vector was gone), and one the clock puts at or
// before 1970 is ErrClockRange (a TTL ending exactly at the epoch was
// stored as "no expiry").
func TestExpiryRoundsUpAndStaysInRange(t *testing.T) {
	clk := kvstore.NewManualClock(epoch)
	db, _ := tempStore(t, kvstore.Options{Clock: clk})
	ix := openIndex(t, db, "v", vector.Options{Dim: 2})
	require.NoError(t, ix.Put(ctx, []byte("ns"), []float32{1, 0}, vector.Put{TTL: time.Nanosecond}))
	require.NoError(t, ix.Put(ctx, []byte("at"), []float32{1, 0}, vector.Put{ExpireAt: epoch.Add(500 * time.Microsecond)}))
	for _, k := range []string{"ns", "at"} {
		e, err := ix.Get(ctx, []byte(k))
		require.NoError(t, err, k)
		require.Equal(t, epoch.Add(time.Millisecond), e.ExpireAt.UTC(), k)
	}
	hits, err := ix.Search(ctx, []float32{1, 0}, vector.Query{})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"ns", "at"}, hitKeys(hits))
	clk.Advance(time.Millisecond)
	n, err := ix.Count(ctx)
	require.NoError(t, err)
	require.Zero(t, n)

	far := time.Date(300_000_000, 1, 1, 0, 0, 0, 0, time.UTC)
	require.ErrorIs(t, ix.Put(ctx, []byte("far"), []float32{1, 0}, vector.Put{ExpireAt: far}), kvstore.ErrInvalidTTL)
	require.NoError(t, ix.Put(ctx, []byte("long"), []float32{1, 0}, vector.Put{TTL: time.Duration(math.MaxInt64)}))
	e, err := ix.Get(ctx, []byte("long"))
	require.NoError(t, err)
	require.True(t, e.ExpireAt.After(epoch.Add(290*365*24*time.Hour)))

	clk.Set(time.UnixMilli(-5))
	for _, p := range []vector.Put{{TTL: 5 * time.Millisecond}, {TTL: time.Millisecond}, {ExpireAt: time.UnixMilli(-2)}} {
		require.ErrorIs(t, ix.Put(ctx, []byte("old"), []float32{1, 0}, p), kvstore.ErrClockRange, "%+v", p)
	}
	require.NoError(t, ix.Put(ctx, []byte("old"), []float32{1, 0}, vector.Put{TTL: 6 * time.Millisecond}))
	clk.Set(time.UnixMilli(1))
	_, err = ix.Get(ctx, []byte("old"))
	require.ErrorIs(t, err, vector.ErrNotFound, "expired at 1970-01-01T00:00:00.001Z")
}

// TestExtremeFiniteVectorsGiveFiniteDistances: under the cosine metric a
// vector of tiny (subnormal) or huge elements is normalised without
// overflow (its float32 scale overflowed to +Inf or lost its digits, and
// every distance to it was NaN); under L2 and dot, whose distances are
// sums in float32, a vector long enough to overflow them is ErrVector
// (they were +Inf or NaN, and the results came in no order).
func TestExtremeFiniteVectorsGiveFiniteDistances(t *testing.T) {
	db, _ := tempStore(t, kvstore.Options{})
	for _, st := range []vector.Storage{vector.F32, vector.F16, vector.Int8} {
		ix := openIndex(t, db, "cos"+st.String(), vector.Options{Dim: 2, Metric: vector.Cosine, Storage: st})
		require.NoError(t, ix.PutBatch(ctx, []vector.Item{
			{Key: []byte("tiny"), Vector: []float32{1e-45, 0}},
			{Key: []byte("huge"), Vector: []float32{0, 3e38}},
			{Key: []byte("diag"), Vector: []float32{3e38, 3e38}},
		}))
		for _, q := range [][]float32{{1e-45, 0}, {1, 0}, {3e38, 0}} {
			hits, err := ix.Search(ctx, q, vector.Query{})
			require.NoError(t, err)
			require.Equal(t, []string{"tiny", "diag", "huge"}, hitKeys(hits), "%s %v", st, q)
			for _, h := range hits {
				require.False(t, math.IsNaN(float64(h.Distance)) || math.IsInf(float64(h.Distance), 0), "%s %v: %v", st, q, hits)
			}
			require.InDelta(t, 0, hits[0].Distance, 1e-3)
			require.InDelta(t, 1-math.Sqrt(0.5), hits[1].Distance, 2e-2)
			require.InDelta(t, 1, hits[2].Distance, 2e-2)
		}
	}
	for _, m := range []vector.Metric{vector.L2, vector.Dot} {
		ix := openIndex(t, db, m.String(), vector.Options{Dim: 2, Metric: m})
		require.ErrorIs(t, ix.Put(ctx, []byte("big"), []float32{1e19, 1e19}, vector.Put{}), vector.ErrVector, "%s", m)
		_, err := ix.Search(ctx, []float32{3e38, 0}, vector.Query{})
		require.ErrorIs(t, err, vector.ErrVector, "%s", m)
		require.NoError(t, ix.PutBatch(ctx, []vector.Item{
			{Key: []byte("a"), Vector: []float32{6e18, 0}},
			{Key: []byte("b"), Vector: []float32{-6e18, 0}},
			{Key: []byte("c"), Vector: []float32{0, 6e18}},
		}))
		hits, err := ix.Search(ctx, []float32{6e18, 0}, vector.Query{})
		require.NoError(t, err)
		require.Equal(t, []string{"a", "c", "b"}, hitKeys(hits), "%s", m)
		for _, h := range hits {
			require.False(t, math.IsNaN(float64(h.Distance)) || math.IsInf(float64(h.Distance), 0), "%s: %v", m, hits)
		}
	}
}

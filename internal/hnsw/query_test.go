package hnsw

import (
	"math"
	"testing"

	"github.com/snkv-go/snkv/internal/vectest"
	"github.com/stretchr/testify/require"
)

// TestCheckRefusesBadVectors: the one check of stored and queried vectors.
func TestCheckRefusesBadVectors(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, tc := range []struct {
		v    []float32
		m    Metric
		want error
	}{
		{[]float32{1, 0}, L2, ErrDim},
		{[]float32{1, 0, float32(math.NaN())}, L2, ErrVector},
		{[]float32{inf, 0, 0}, Dot, ErrVector},
		{[]float32{0, 0, 0}, Cosine, ErrVector},
		{[]float32{1e19, 1e19, 0}, L2, ErrVector},
		{[]float32{1e19, 1e19, 0}, Dot, ErrVector},
	} {
		err := Check(tc.v, 3, tc.m)
		require.ErrorIs(t, err, tc.want, "%v %d", tc.v, tc.m)
		var ce *CheckError
		require.ErrorAs(t, err, &ce)
		require.NotEmpty(t, ce.Why)
		_, err = NewQuery(tc.v, 3, tc.m)
		require.ErrorIs(t, err, tc.want)
	}
	require.NoError(t, Check([]float32{0, 0, 0}, 3, L2))
	require.NoError(t, Check([]float32{1e19, 1e19, 0}, 3, Cosine))
	require.NoError(t, Check([]float32{6e18, 0, 0}, 3, Dot))
}

// TestQueryDistIsTheGraphsDistance: a float32 graph's search and a Query's
// Dist to the vector as given give a node the same distance, under every
// metric, so the exact paths above the graph order as the graph does.
func TestQueryDistIsTheGraphsDistance(t *testing.T) {
	set := vectest.Generate(vectest.Clustered(300, 5, 40))
	for _, m := range []Metric{L2, Cosine, Dot} {
		g, err := New(Config{Dim: 40, Metric: m, Seed: 1})
		require.NoError(t, err)
		require.NoError(t, g.InsertBatch(allIDs(len(set.Base)), set.Base, 1))
		for _, v := range set.Queries {
			q, err := NewQuery(v, 40, m)
			require.NoError(t, err)
			res, err := g.SearchQuery(q, SearchOptions{K: 5, Ef: 32})
			require.NoError(t, err)
			require.Len(t, res, 5)
			for _, r := range res {
				require.Equal(t, r.Dist, q.Dist(set.Base[r.ID]), "metric %d id %d", m, r.ID)
			}
		}
		q, err := NewQuery(set.Queries[0], 40, m)
		require.NoError(t, err)
		g2, err := New(Config{Dim: 40, Metric: (m + 1) % 3})
		require.NoError(t, err)
		_, err = g2.SearchQuery(q, SearchOptions{K: 1})
		require.ErrorIs(t, err, ErrDim)
	}
	q, err := NewQuery([]float32{1, 0}, 2, Cosine)
	require.NoError(t, err)
	require.Equal(t, float32(1), q.Dist([]float32{0, 0}))
	require.InDelta(t, 1-math.Sqrt(0.5), q.Dist([]float32{3e38, 3e38}), 1e-6)
	require.InDelta(t, 0, q.Dist([]float32{1e-45, 0}), 1e-6)
}

// TestHeapKeysOrderAsNearer: the search's heap compares packed keys; they
// order as nearer (distance, then id), negative distances (dot) included,
// and unpack to the item.
func TestHeapKeysOrderAsNearer(t *testing.T) {
	ds := []float32{-3e38, -2, -1, -1e-30, 0, 1e-30, 0.5, 1, 2, 3e38}
	var items []item
	for _, d := range ds {
		for _, id := range []uint32{0, 7, ^uint32(0)} {
			items = append(items, item{d, id})
		}
	}
	for _, a := range items {
		require.Equal(t, a, unkey(key(a)))
		for _, b := range items {
			require.Equal(t, nearer(a, b), key(a) < key(b), "%v %v", a, b)
		}
	}
	var f farHeap
	var h heap
	for i, a := range items {
		f.offer(items[(i*7)%len(items)], 5)
		h.push(key(a))
	}
	require.Equal(t, items[:5], f.drain(nil))
	for _, a := range items {
		require.Equal(t, a, unkey(h.pop()))
	}
}

// byFirst orders pairs by their first element, farthest at the root.
type byFirst struct{}

func (byFirst) Before(a, b [2]int) bool { return a[0] > b[0] }

// TestGenericHeapAndSort: Heap.Offer keeps the k that come last in its
// order, Drain returns them in reverse pop order, and Sort is stable.
func TestGenericHeapAndSort(t *testing.T) {
	var h Heap[[2]int, byFirst]
	for i, x := range []int{5, 1, 9, 3, 7, 3, 0, 8} {
		h.Offer([2]int{x, i}, 3)
	}
	require.Equal(t, 3, h.Len())
	require.Equal(t, [2]int{3, 3}, h.Top())
	require.Equal(t, [][2]int{{0, 6}, {1, 1}, {3, 3}}, h.Drain(nil))
	require.Zero(t, h.Len())
	s := [][2]int{{2, 0}, {1, 1}, {2, 2}, {0, 3}, {1, 4}}
	Sort[[2]int, byFirst](s)
	require.Equal(t, [][2]int{{2, 0}, {2, 2}, {1, 1}, {1, 4}, {0, 3}}, s)
}

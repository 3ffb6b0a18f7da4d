package hnsw

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// tiedGraph holds n vectors of dim components each 0, 1 or 2, so many
// distances are equal, with every seventh node deleted.
func tiedGraph(t *testing.T, n, dim int, rng *rand.Rand) *Graph {
	g, err := New(Config{Dim: dim, Metric: L2, M: 4, EfConstruction: 16, Seed: 3})
	require.NoError(t, err)
	for i := range n {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.IntN(3))
		}
		require.NoError(t, g.Insert(uint32(i), v))
	}
	for i := 0; i < n; i += 7 {
		require.True(t, g.Delete(uint32(i)))
	}
	return g
}

// The exact scan split across goroutines returns what the scan on one
// goroutine returns, the same ids in the same order, on data where many
// distances tie, with ids listed twice, out of order or out of range, with
// and without a filter.
func TestExactSplitMatchesOneGoroutine(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const n, dim = 3000, 4
	g := tiedGraph(t, n, dim, rng)
	s := g.getScratchFor(g.n)
	defer g.putScratch(s)
	for round := range 60 {
		q := make([]float32, dim)
		for j := range q {
			q[j] = float32(rng.IntN(3))
		}
		ids := make([]uint32, 0, n)
		for range rng.IntN(n) + 1 {
			ids = append(ids, uint32(rng.IntN(n+50)))
		}
		var allow func(uint32) bool
		if round%2 == 1 {
			allow = func(id uint32) bool { return id%3 != 0 }
		}
		k := 1 + rng.IntN(40)
		want := g.exactSplit(s, q, 0, k, ids, allow, 1)
		require.NotEmpty(t, want)
		for i := 1; i < len(want); i++ {
			require.True(t, nearer(want[i-1], want[i]), "round %d: %v before %v", round, want[i-1], want[i])
		}
		for _, workers := range []int{2, 3, 4, 7} {
			got := g.exactSplit(s, q, 0, k, ids, allow, workers)
			require.Equal(t, want, got, "round %d, %d workers", round, workers)
		}
		rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		require.Equal(t, want, g.exactSplit(s, q, 0, k, ids, allow, 3), "round %d, shuffled", round)
	}
}

// Search with a subset long enough to be split across goroutines returns
// the k nearest of the subset by a sort of every candidate, ties by id.
func TestSearchSplitScanIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	const n, dim = 14000, 4
	g := tiedGraph(t, n, dim, rng)
	subset := make([]uint32, 0, n)
	for i := uint32(0); i < n; i++ {
		if i%7 != 0 && rng.IntN(4) != 0 {
			subset = append(subset, i)
		}
	}
	require.GreaterOrEqual(t, len(subset), 2*scanPerWorker)
	for range 20 {
		q := make([]float32, dim)
		for j := range q {
			q[j] = float32(rng.IntN(3))
		}
		all := make([]item, 0, len(subset))
		for _, id := range subset {
			all = append(all, item{l2(q, g.vf32[id>>chunkShift][int(id&chunkMask)*dim:][:dim]), id})
		}
		slices.SortFunc(all, func(a, b item) int {
			if nearer(a, b) {
				return -1
			}
			return 1
		})
		got, err := g.Search(q, SearchOptions{K: 25, Subset: subset, ExactBelow: 1 << 30})
		require.NoError(t, err)
		require.Len(t, got, 25)
		for i, r := range got {
			require.Equal(t, Result{all[i].id, all[i].d}, r, "hit %d", i)
		}
	}
}

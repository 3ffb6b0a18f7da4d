package hnsw

import (
	"cmp"
	"math"
	"slices"
	"testing"

	"github.com/snkv-go/snkv/internal/vectest"
	"github.com/stretchr/testify/require"
)

func small(t *testing.T, n int, cfg Config) (*Graph, *vectest.Set, [][]vectest.Neighbour) {
	set := vectest.Generate(vectest.Clustered(n, 50, 24))
	if cfg.Metric == 0 {
		cfg.Metric = Cosine
	}
	g := build(t, set, cfg)
	m := map[Metric]vectest.Metric{L2: vectest.L2, Cosine: vectest.Cosine, Dot: vectest.Dot}[cfg.Metric]
	return g, set, vectest.Truth(set.Base, set.Queries, 10, m, nil)
}

func TestConfigAndBadInput(t *testing.T) {
	_, err := New(Config{})
	require.Error(t, err)
	_, err = New(Config{Dim: 4, M: 1})
	require.Error(t, err)
	g, err := New(Config{Dim: 3, Metric: Cosine})
	require.NoError(t, err)
	require.ErrorIs(t, g.Insert(0, []float32{1, 2}), ErrDim)
	require.ErrorIs(t, g.Insert(0, []float32{0, 0, 0}), ErrVector)
	require.ErrorIs(t, g.Insert(0, []float32{1, float32(math.NaN()), 0}), ErrVector)
	require.Equal(t, 0, g.Len(), "a refused insert adds nothing")
	res, err := g.Search([]float32{1, 0, 0}, SearchOptions{K: 3})
	require.NoError(t, err)
	require.Empty(t, res, "an empty graph finds nothing")
	_, err = g.Search([]float32{1, 0}, SearchOptions{K: 3})
	require.ErrorIs(t, err, ErrDim)
}

func TestMetricsAndStorages(t *testing.T) {
	for _, m := range []Metric{L2, Cosine, Dot} {
		for _, st := range []Storage{F32, F16, I8} {
			n := sized(2000, 600) // nine graphs: keep -race within a minute
			g, set, truth := small(t, n, Config{Metric: m, Storage: st, Seed: 3})
			r := recallOf(t, g, set, truth, SearchOptions{K: 10, Ef: 64})
			want := 0.97
			if st != F32 {
				want = 0.85 // approximate distances, no rerank
			}
			require.GreaterOrEqual(t, r, want, "metric %d storage %d", m, st)
			if st != F32 {
				// The layer above reranks: three times K by the stored
				// vectors, ordered by the query's exact distance to the
				// float32 ones.
				got := make([][]int, len(set.Queries))
				for qi, v := range set.Queries {
					q, err := NewQuery(v, g.cfg.Dim, g.cfg.Metric)
					require.NoError(t, err)
					res, err := g.SearchQuery(q, SearchOptions{K: 30, Ef: 64})
					require.NoError(t, err)
					for i := range res {
						res[i].Dist = q.Dist(set.Base[res[i].ID])
					}
					slices.SortStableFunc(res, func(a, b Result) int { return cmp.Compare(a.Dist, b.Dist) })
					for _, r := range res[:min(10, len(res))] {
						got[qi] = append(got[qi], int(r.ID))
					}
				}
				require.GreaterOrEqual(t, vectest.Recall(got, truth), 0.97, "metric %d storage %d reranked", m, st)
			}
		}
	}
}

func TestF16RoundTrip(t *testing.T) {
	for _, f := range []float32{0, 1, -1, 0.5, 65504, 1e-7, -3.14159, 6e-5} {
		h := f32ToF16(f)
		require.InDelta(t, f, f16ToF32(h), math.Abs(float64(f))/1000+6e-8, "%g", f)
	}
	require.True(t, math.IsInf(float64(f16ToF32(f32ToF16(1e6))), 1))
}

func TestDeleteRepairAndReuse(t *testing.T) {
	g, set, _ := small(t, 3000, Config{Seed: 5})
	dead := deleteEvery(t, g, 0, 3000, 3)
	require.False(t, g.Delete(0), "a second delete finds no node")
	require.Equal(t, 2000, g.Live())
	require.Equal(t, 1000, g.Tombstones())
	alive := func(id int) bool { return !dead[uint32(id)] }
	truth := vectest.Truth(set.Base, set.Queries, 10, vectest.Cosine, alive)
	before := recallOf(t, g, set, truth, SearchOptions{K: 10, Ef: 64})
	freed := g.RepairDeleted()
	require.Len(t, freed, 1000)
	require.Equal(t, 0, g.Tombstones())
	for id := uint32(0); id < g.n; id++ {
		for l := 0; l <= int(g.levels[id]); l++ {
			for _, nb := range g.neighbours(id, l) {
				require.False(t, dead[nb], "node %d still links to deleted %d", id, nb)
			}
		}
	}
	after := recallOf(t, g, set, truth, SearchOptions{K: 10, Ef: 64})
	t.Logf("recall with tombstones %.4f, after repair %.4f", before, after)
	require.GreaterOrEqual(t, after, 0.97)
	require.GreaterOrEqual(t, before, 0.97)
	// Freed slots take new vectors.
	for _, id := range freed {
		require.NoError(t, g.Insert(id, set.Base[id]))
	}
	require.Equal(t, 3000, g.Live())
	truth = vectest.Truth(set.Base, set.Queries, 10, vectest.Cosine, nil)
	require.GreaterOrEqual(t, recallOf(t, g, set, truth, SearchOptions{K: 10, Ef: 64}), 0.97)
}

func TestFiltersReturnMinKMatching(t *testing.T) {
	g, set, _ := small(t, 4000, Config{Seed: 7})
	for _, every := range []int{2, 10, 100, 1000, 5000} {
		allow := func(id int) bool { return id%every == 0 }
		truth := vectest.Truth(set.Base, set.Queries, 10, vectest.Cosine, allow)
		got := make([][]int, len(set.Queries))
		for q, v := range set.Queries {
			res, err := g.Search(v, SearchOptions{K: 10, Ef: 64, Allow: func(id uint32) bool { return allow(int(id)) }})
			require.NoError(t, err)
			require.Len(t, res, min(10, (4000+every-1)/every), "every %d", every)
			for _, r := range res {
				require.True(t, allow(int(r.ID)))
				got[q] = append(got[q], int(r.ID))
			}
		}
		r := vectest.Recall(got, truth)
		t.Logf("filter 1/%d: recall %.4f", every, r)
		require.GreaterOrEqual(t, r, 0.95, "every %d", every)
	}
	// A subset: an exact scan.
	sub := []uint32{5, 17, 300, 3999, 17}
	res, err := g.Search(set.Queries[0], SearchOptions{K: 10, Subset: sub})
	require.NoError(t, err)
	require.Len(t, res, 4)
}

func TestPersistRoundTrip(t *testing.T) {
	g, set, truth := small(t, 2000, Config{Seed: 9})
	require.Equal(t, 2000, g.Dirty())
	ids := g.TakeDirty(1500)
	require.Len(t, ids, 1500)
	require.Len(t, g.TakeDirty(10000), 500)
	require.Equal(t, 0, g.Dirty())
	h, err := New(g.Config())
	require.NoError(t, err)
	for id := uint32(0); id < 2000; id++ {
		n, ok := g.Node(id)
		require.True(t, ok)
		require.NoError(t, h.Load(id, set.Base[id], n))
	}
	require.Equal(t, 0, h.Prune())
	require.Equal(t, recallOf(t, g, set, truth, SearchOptions{K: 10, Ef: 64}), recallOf(t, h, set, truth, SearchOptions{K: 10, Ef: 64}))
	// A graph loaded with links to nodes that never came: Prune drops them.
	p, _ := New(g.Config())
	n, _ := g.Node(0)
	require.NoError(t, p.Load(0, set.Base[0], n))
	require.Equal(t, len(n.Links[0])+countUpper(n), p.Prune())
	require.Error(t, p.Load(1, set.Base[1], Node{Level: 1, Links: [][]uint32{{}}}))
}

func countUpper(n Node) int {
	c := 0
	for _, l := range n.Links[1:] {
		c += len(l)
	}
	return c
}

func TestConcurrentSearchAndInsert(t *testing.T) {
	set := vectest.Generate(vectest.Clustered(1500, 20, 16))
	g, _ := New(Config{Dim: 16, Metric: Cosine})
	for i := range 500 {
		require.NoError(t, g.Insert(uint32(i), set.Base[i]))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 500; i < 1500; i++ {
			_ = g.Insert(uint32(i), set.Base[i])
			if i%7 == 0 {
				g.Delete(uint32(i - 300))
			}
		}
	}()
	for i := 0; i < 300; i++ {
		_, err := g.Search(set.Queries[i%20], SearchOptions{K: 5, Ef: 32})
		require.NoError(t, err)
	}
	<-done
	g.RepairDeleted()
}

// A node inserted when every other node is a tombstone becomes the entry
// point (it would otherwise be linked to nothing and never found).
func TestInsertAfterEveryNodeDeleted(t *testing.T) {
	g, err := New(Config{Dim: 2})
	require.NoError(t, err)
	require.NoError(t, g.Insert(0, []float32{1, 0}))
	require.True(t, g.Delete(0))
	require.NoError(t, g.Insert(1, []float32{0, 1}))
	res, err := g.Search([]float32{1, 0}, SearchOptions{K: 3})
	require.NoError(t, err)
	require.Equal(t, []Result{{ID: 1, Dist: 2}}, res)
}

// Nodes inserted again (live or deleted) keep their level: links of others
// to them at upper levels stay valid, and searches walk them (a new level
// drawn for a taken-over node left links to levels it no longer had).
func TestInsertAgainKeepsLevels(t *testing.T) {
	set := vectest.Generate(vectest.Clustered(1200, 20, 8))
	g, err := New(Config{Dim: 8, Metric: Cosine, M: 4, EfConstruction: 16, Seed: 11})
	require.NoError(t, err)
	for i := range 600 {
		require.NoError(t, g.Insert(uint32(i), set.Base[i]))
	}
	for round := range 3 {
		for i := range 600 {
			if i%3 == round {
				g.Delete(uint32(i))
			}
			require.NoError(t, g.Insert(uint32(i), set.Base[600+(i+round*37)%600]))
		}
		for _, q := range set.Queries {
			res, err := g.Search(q, SearchOptions{K: 5, Ef: 16})
			require.NoError(t, err)
			require.Len(t, res, 5)
		}
	}
}

// TestHugeKIsCutToTheSlots: a K or Ef past the graph's
// slots returns every node instead of sizing a heap by K (a K of
// math.MaxInt panicked in makeslice).
func TestHugeKIsCutToTheSlots(t *testing.T) {
	g, err := New(Config{Dim: 2, Metric: L2, Storage: I8})
	require.NoError(t, err)
	for i, v := range [][]float32{{1, 0}, {0, 1}, {1, 1}} {
		require.NoError(t, g.Insert(uint32(i), v))
	}
	for _, o := range []SearchOptions{
		{K: math.MaxInt},
		{K: 3, Ef: math.MaxInt},
		{K: math.MaxInt, Allow: func(uint32) bool { return true }},
		{K: math.MaxInt, Subset: []uint32{0, 1, 2}},
	} {
		res, err := g.Search([]float32{1, 0}, o)
		require.NoError(t, err)
		var ids []uint32
		for _, r := range res {
			ids = append(ids, r.ID)
		}
		require.Equal(t, []uint32{0, 2, 1}, ids, "%+v", o)
	}
	require.Equal(t, math.MaxInt, SatMul(math.MaxInt/2+1, 2))
	require.Equal(t, 6, SatMul(2, 3))
	require.Equal(t, 0, SatMul(0, math.MaxInt))
}

// TestCosineNormalisesSubnormalAndHugeVectors: the cosine metric scales a
// vector to unit length in float64 (in float32 the scale of a subnormal
// vector was +Inf, and its distances NaN).
func TestCosineNormalisesSubnormalAndHugeVectors(t *testing.T) {
	for _, st := range []Storage{F32, F16, I8} {
		g, err := New(Config{Dim: 2, Metric: Cosine, Storage: st})
		require.NoError(t, err)
		require.NoError(t, g.Insert(0, []float32{1e-45, 0}))
		require.NoError(t, g.Insert(1, []float32{0, 3e38}))
		res, err := g.Search([]float32{1e-45, 1e-45}, SearchOptions{K: 2})
		require.NoError(t, err)
		require.Len(t, res, 2)
		for _, r := range res {
			require.InDelta(t, 1-math.Sqrt(0.5), r.Dist, 2e-2, "storage %d: %v", st, res)
		}
	}
}

// sized returns n, or underRace when the tests run with -race (several
// times slower).
func sized(n, underRace int) int {
	if raceEnabled {
		return underRace
	}
	return n
}

// deleteEvery deletes the nodes from, from+step, … below to, each of which
// must be there, and returns them.
func deleteEvery(t *testing.T, g *Graph, from, to, step uint32) map[uint32]bool {
	t.Helper()
	dead := map[uint32]bool{}
	for id := from; id < to; id += step {
		require.True(t, g.Delete(id))
		dead[id] = true
	}
	return dead
}

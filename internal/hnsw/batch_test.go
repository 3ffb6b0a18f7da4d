package hnsw

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/snkv-go/snkv/internal/vectest"
	"github.com/stretchr/testify/require"
)

// checkLinks fails if a link names an empty slot, a node below the link's
// level or the node itself, or a list is longer than its level allows.
func checkLinks(t *testing.T, g *Graph) {
	t.Helper()
	for id := uint32(0); id < g.n; id++ {
		for l := 0; l <= int(g.levels[id]); l++ {
			nbs := g.neighbours(id, l)
			lim := g.m
			if l == 0 {
				lim = g.m0
			}
			require.LessOrEqual(t, len(nbs), lim, "node %d level %d", id, l)
			for _, nb := range nbs {
				require.NotEqual(t, id, nb, "node %d links to itself", id)
				require.Less(t, nb, g.n)
				require.GreaterOrEqual(t, int(g.levels[nb]), l, "node %d level %d links to %d of level %d", id, l, nb, g.levels[nb])
			}
		}
	}
}

func ids(lo, hi int) []uint32 {
	out := make([]uint32, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, uint32(i))
	}
	return out
}

// A batch linked on several goroutines is as good a graph as one built an
// insert at a time.
func TestInsertBatchParallelRecall(t *testing.T) {
	n := 6000
	if raceEnabled {
		n = 1500
	}
	set := vectest.Generate(vectest.Clustered(n, 100, 32))
	truth := vectest.Truth(set.Base, set.Queries, 10, vectest.Cosine, nil)
	serial := build(t, set, Config{Dim: 32, Metric: Cosine, Seed: 1})
	g, err := New(Config{Dim: 32, Metric: Cosine, Seed: 1})
	require.NoError(t, err)
	for lo := 0; lo < n; lo += 500 {
		require.NoError(t, g.InsertBatch(ids(lo, min(lo+500, n)), set.Base[lo:min(lo+500, n)], 4))
	}
	require.Equal(t, n, g.Live())
	require.Equal(t, 0, g.staged)
	checkLinks(t, g)
	o := SearchOptions{K: 10, Ef: 64}
	rs, rp := recallOf(t, serial, set, truth, o), recallOf(t, g, set, truth, o)
	t.Logf("recall@10 at ef 64: serial %.4f, batches on 4 goroutines %.4f", rs, rp)
	require.GreaterOrEqual(t, rp, rs-0.02)
	require.GreaterOrEqual(t, rp, 0.97)
}

// Searches run while a batch is being linked and never return a staged
// node; after Publish the whole batch is found. Run with -race.
func TestSearchBesideLinking(t *testing.T) {
	n := 3000
	if raceEnabled {
		n = 1200
	}
	set := vectest.Generate(vectest.Clustered(n, 40, 24))
	g, err := New(Config{Dim: 24, Metric: Cosine, Seed: 2})
	require.NoError(t, err)
	half := n / 2
	require.NoError(t, g.InsertBatch(ids(0, half), set.Base[:half], 2))
	b, err := g.Stage(ids(half, n), set.Base[half:])
	require.NoError(t, err)
	require.Equal(t, half, g.Live(), "staged nodes are not live")
	require.False(t, g.Contains(uint32(half)))
	_, ok := g.Node(uint32(half))
	require.False(t, ok, "a staged node is not given to persist")

	var stop atomic.Bool
	var wg sync.WaitGroup
	var searches atomic.Int64
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				res, err := g.Search(set.Base[half+i%half], SearchOptions{K: 10, Ef: 32})
				if err != nil {
					t.Error(err)
					return
				}
				for _, r := range res {
					if int(r.ID) >= half {
						t.Errorf("search returned staged node %d", r.ID)
						return
					}
				}
				searches.Add(1)
			}
		}()
	}
	b.Link(2)
	stop.Store(true)
	wg.Wait()
	t.Logf("%d searches beside the linking", searches.Load())
	b.Publish()
	require.Equal(t, n, g.Live())
	checkLinks(t, g)
	found := 0
	for i := half; i < n; i += 50 {
		res, err := g.Search(set.Base[i], SearchOptions{K: 1, Ef: 64})
		require.NoError(t, err)
		if len(res) == 1 && int(res[0].ID) == i {
			found++
		}
	}
	require.GreaterOrEqual(t, found, (n-half)/50*9/10, "published vectors are found")
}

// Inserts from several goroutines at once (hnswlib's concurrent insert)
// build a sound graph. Run with -race.
func TestConcurrentInserts(t *testing.T) {
	n := 2000
	if raceEnabled {
		n = 800
	}
	set := vectest.Generate(vectest.Clustered(n, 50, 16))
	truth := vectest.Truth(set.Base, set.Queries, 10, vectest.Cosine, nil)
	g, err := New(Config{Dim: 16, Metric: Cosine, Seed: 3})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 4 {
				if err := g.Insert(uint32(i), set.Base[i]); err != nil {
					t.Error(err)
					return
				}
				if i%7 == 0 {
					_, _ = g.Search(set.Base[i], SearchOptions{K: 5})
					g.TakeDirty(64)
				}
			}
		}()
	}
	wg.Wait()
	require.Equal(t, n, g.Live())
	checkLinks(t, g)
	require.GreaterOrEqual(t, recallOf(t, g, set, truth, SearchOptions{K: 10, Ef: 64}), 0.95)
}

// Stage refuses a bad batch whole, and an id staged twice.
func TestStageRefuses(t *testing.T) {
	g, err := New(Config{Dim: 3, Metric: Cosine})
	require.NoError(t, err)
	v := [][]float32{{1, 0, 0}, {0, 1, 0}}
	_, err = g.Stage([]uint32{0, 0}, v)
	require.ErrorContains(t, err, "twice")
	_, err = g.Stage([]uint32{0, 1}, [][]float32{{1, 0, 0}, {0, 0, 0}})
	require.ErrorIs(t, err, ErrVector)
	_, err = g.Stage([]uint32{0}, v)
	require.Error(t, err, "ids and vectors differ in number")
	require.Equal(t, 0, g.Len(), "a refused batch stages nothing")

	b, err := g.Stage([]uint32{0, 1}, v)
	require.NoError(t, err)
	_, err = g.Stage([]uint32{1}, v[:1])
	require.ErrorContains(t, err, "staged")
	require.ErrorContains(t, g.Insert(1, v[0]), "staged")
	require.False(t, g.Delete(1), "a staged node is not deleted")
	require.Empty(t, g.TakeDirty(10), "staged nodes wait to be taken")
	b.Publish()
	require.Equal(t, 2, g.Live())
	require.ElementsMatch(t, []uint32{0, 1}, g.TakeDirty(10))
	res, err := g.Search([]float32{0, 1, 0}, SearchOptions{K: 1})
	require.NoError(t, err)
	require.Equal(t, uint32(1), res[0].ID)
}

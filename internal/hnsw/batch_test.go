package hnsw

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/snkv-go/snkv/internal/testutil"
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
	n := sized(6000, 1500)
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
	n := sized(3000, 1200)
	set := vectest.Generate(vectest.Clustered(n, 40, 24))
	g, err := New(Config{Dim: 24, Metric: Cosine, Seed: 2})
	require.NoError(t, err)
	half := n / 2
	require.NoError(t, g.InsertBatch(ids(0, half), set.Base[:half], 2))
	b, err := g.Stage(ids(half, n), set.Base[half:], nil)
	require.NoError(t, err)
	require.Equal(t, half, g.Live(), "staged nodes are not live")
	require.False(t, g.Contains(uint32(half)))
	_, ok := g.Node(uint32(half))
	require.False(t, ok, "a staged node is not given to persist")

	searchers := testutil.NewLoops()
	var searches atomic.Int64
	for range 2 {
		searchers.Go(func(i int) bool {
			res, err := g.Search(set.Base[half+i%half], SearchOptions{K: 10, Ef: 32})
			if err != nil {
				t.Error(err)
				return false
			}
			for _, r := range res {
				if int(r.ID) >= half {
					t.Errorf("search returned staged node %d", r.ID)
					return false
				}
			}
			searches.Add(1)
			return true
		})
	}
	b.Link(2)
	searchers.Stop()
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
	n := sized(2000, 800)
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
	_, err = g.Stage([]uint32{0, 0}, v, nil)
	require.ErrorContains(t, err, "twice")
	_, err = g.Stage([]uint32{0, 1}, [][]float32{{1, 0, 0}, {0, 0, 0}}, nil)
	require.ErrorIs(t, err, ErrVector)
	_, err = g.Stage([]uint32{0}, v, nil)
	require.Error(t, err, "ids and vectors differ in number")
	require.Equal(t, 0, g.Len(), "a refused batch stages nothing")

	b, err := g.Stage([]uint32{0, 1}, v, nil)
	require.NoError(t, err)
	_, err = g.Stage([]uint32{1}, v[:1], nil)
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

// unreachable counts the nodes no path of links leads to from the entry
// point.
func unreachable(g *Graph) int {
	e, top := g.entryPoint()
	if top < 0 {
		return 0
	}
	seen := map[uint32]bool{e: true}
	stack := []uint32{e}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for l := 0; l <= int(g.levels[x]); l++ {
			for _, nb := range g.neighbours(x, l) {
				if !seen[nb] {
					seen[nb] = true
					stack = append(stack, nb)
				}
			}
		}
	}
	n := 0
	for id := uint32(0); id < g.n; id++ {
		if g.levels[id] >= 0 && !seen[id] {
			n++
		}
	}
	return n
}

// Small graphs built by batches on several goroutines, then taking over
// half their nodes batch after batch, leave no node unreachable (a node
// linked to while its own lists were being set lost those links; a node
// taken over while it was the entry point was never linked; a node taken
// over whose search met, at its top level, only nodes the batch takes over
// too got no links at any level: seeds 230, 289, 400, 511 and 538 left one
// such node unreachable, one graph in a hundred).
func TestBatchesLeaveNoNodeUnreachable(t *testing.T) {
	set := vectest.Generate(vectest.Clustered(600, 0, 16))
	graphs := sized(60, 8)
	seeds := []int{230, 289, 400, 511, 538}
	for i := range graphs {
		seeds = append(seeds, i)
	}
	for _, workers := range []int{1, 2, 4} {
		for _, trial := range seeds {
			g, err := New(Config{Dim: 16, Metric: Cosine, Seed: uint64(trial)})
			require.NoError(t, err)
			require.NoError(t, g.InsertBatch(ids(0, 100), set.Base[:100], workers))
			require.NoError(t, g.InsertBatch(ids(100, 200), set.Base[100:200], workers))
			require.Zero(t, unreachable(g), "workers %d, graph %d, built", workers, trial)
			for round := range 4 {
				var over []uint32
				var vs [][]float32
				for i := 0; i < 200; i += 2 {
					over = append(over, uint32(i))
					vs = append(vs, set.Base[200+i+round%2*200])
				}
				require.NoError(t, g.InsertBatch(over, vs, workers))
			}
			require.Zero(t, unreachable(g), "workers %d, graph %d, after taking over", workers, trial)
			checkLinks(t, g)
		}
	}
}

// The nodes a batch deletes stay returned until Publish, which deletes
// them at once with publishing the batch; the batch does not link to them.
func TestStageGone(t *testing.T) {
	set := vectest.Generate(vectest.Clustered(400, 0, 16))
	g, err := New(Config{Dim: 16, Metric: Cosine, Seed: 4})
	require.NoError(t, err)
	require.NoError(t, g.InsertBatch(ids(0, 300), set.Base[:300], 2))
	var gone []uint32
	for id := uint32(0); id < 300; id += 3 {
		gone = append(gone, id)
	}
	gone = append(gone, 1000) // no such node: skipped
	b, err := g.Stage(ids(300, 400), set.Base[300:], gone)
	require.NoError(t, err)
	res, err := g.Search(set.Base[0], SearchOptions{K: 1})
	require.NoError(t, err)
	require.Equal(t, uint32(0), res[0].ID, "returned until Publish")
	b.Link(2)
	for id := uint32(300); id < 400; id++ {
		for _, nb := range g.neighbours(id, 0) {
			require.True(t, nb%3 != 0 || nb >= 300, "node %d links to %d, which the batch deletes", id, nb)
		}
	}
	b.Publish()
	require.Equal(t, 300, g.Live())
	require.Equal(t, 100, g.Tombstones())
	require.False(t, g.Contains(0))
	res, err = g.Search(set.Base[0], SearchOptions{K: 1})
	require.NoError(t, err)
	require.True(t, res[0].ID%3 != 0 || res[0].ID >= 300, "deleted at Publish, found %d", res[0].ID)
}

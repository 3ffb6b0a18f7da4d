package hnsw

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/vectest"
)

// requireNoLinkTo fails if a node still links to one in dead.
func requireNoLinkTo(t *testing.T, g *Graph, dead map[uint32]bool) {
	t.Helper()
	for id := uint32(0); id < g.n; id++ {
		for l := 0; l <= int(g.levels[id]); l++ {
			for _, nb := range g.neighbours(id, l) {
				require.False(t, dead[nb], "node %d still links to deleted %d", id, nb)
			}
		}
	}
}

func TestRepairStepWorksInSlices(t *testing.T) {
	g, set, _ := small(t, 3000, Config{Seed: 5})
	dead := deleteEvery(t, g, 0, 3000, 3)
	alive := func(id int) bool { return !dead[uint32(id)] }
	truth := vectest.Truth(set.Base, set.Queries, 10, vectest.Cosine, alive)
	steps := 0
	var freed []uint32
	for {
		f, done := g.RepairStep(time.Nanosecond)
		steps++
		// Between steps the graph is half rewired: searches still find
		// only live nodes.
		res, err := g.Search(set.Queries[steps%len(set.Queries)], SearchOptions{K: 10, Ef: 64})
		require.NoError(t, err)
		for _, r := range res {
			require.False(t, dead[r.ID], "search returned deleted %d", r.ID)
		}
		if done {
			freed = f
			break
		}
		require.True(t, g.RepairPending())
		require.Nil(t, f)
	}
	require.Greater(t, steps, 10, "a budget of 1 ns rewires about one list a step")
	require.False(t, g.RepairPending())
	require.Len(t, freed, 1000)
	require.Equal(t, 0, g.Tombstones())
	requireNoLinkTo(t, g, dead)
	require.GreaterOrEqual(t, recallOf(t, g, set, truth, SearchOptions{K: 10, Ef: 64}), 0.97)
	f, done := g.RepairStep(time.Millisecond)
	require.True(t, done, "nothing to repair")
	require.Empty(t, f)
}

func TestRepairStepBeginsAgainAfterAChange(t *testing.T) {
	g, _, _ := small(t, 2000, Config{Seed: 9})
	dead := deleteEvery(t, g, 0, 1000, 2)
	for range 5 {
		_, done := g.RepairStep(time.Nanosecond)
		require.False(t, done)
	}
	// A delete between steps: the repair must not free the old tombstones
	// while nodes it has passed link to the new one, nor miss it.
	for id := uint32(1001); id < 2000; id += 2 {
		require.True(t, g.Delete(id))
		dead[id] = true
	}
	var freed []uint32
	for {
		f, done := g.RepairStep(50 * time.Microsecond)
		if done {
			freed = f
			break
		}
	}
	require.Len(t, freed, len(dead))
	require.Equal(t, 0, g.Tombstones())
	requireNoLinkTo(t, g, dead)
}

// BenchmarkSearchDuringRepair: searches on one goroutine while another
// repairs tombstones (2 % of 20,000 hard-set vectors deleted, then put
// again, over and over) in steps of 200 µs, as vector's background does,
// or all at once (RepairDeleted, as it did before). p99-µs and max-µs are
// the latency of a search, waiting included.
func BenchmarkSearchDuringRepair(b *testing.B) {
	set := vectest.Generate(vectest.Hard(20000, 200, 384))
	g, err := New(Config{Dim: 384, Metric: Cosine, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]uint32, len(set.Base))
	for i := range ids {
		ids[i] = uint32(i)
	}
	if err := g.InsertBatch(ids, set.Base, 0); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"slices", "whole"} {
		b.Run(mode, func(b *testing.B) {
			var stop atomic.Bool
			var wg sync.WaitGroup
			repairs := 0
			wg.Add(1)
			go func() {
				defer wg.Done()
				for round := 0; !stop.Load(); round++ {
					var gone []uint32
					for id := uint32(round % 50); id < uint32(len(set.Base)); id += 50 {
						g.Delete(id)
						gone = append(gone, id)
					}
					if mode == "whole" {
						g.RepairDeleted()
					} else {
						for {
							if _, done := g.RepairStep(200 * time.Microsecond); done {
								break
							}
						}
					}
					repairs++
					vs := make([][]float32, len(gone))
					for i, id := range gone {
						vs[i] = set.Base[id]
					}
					if err := g.InsertBatch(gone, vs, 1); err != nil {
						panic(err)
					}
				}
			}()
			lat := make([]time.Duration, 0, b.N)
			i := 0
			for b.Loop() {
				t0 := time.Now()
				_, _ = g.Search(set.Queries[i%len(set.Queries)], SearchOptions{K: 10, Ef: 128})
				lat = append(lat, time.Since(t0))
				i++
			}
			stop.Store(true)
			wg.Wait()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
			b.ReportMetric(float64(repairs), "repairs")
		})
	}
}

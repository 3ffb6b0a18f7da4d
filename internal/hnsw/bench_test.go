package hnsw

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/internal/vectest"
)

func BenchmarkInsert(b *testing.B) {
	set := vectest.Generate(vectest.Clustered(10000, 0, 384))
	b.ResetTimer()
	cpu := testutil.CPUTime()
	for b.Loop() {
		g, _ := New(Config{Dim: 384, Metric: Cosine, Seed: 1})
		for i, v := range set.Base {
			_ = g.Insert(uint32(i), v)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(set.Base))/1e3, "µs/insert")
	b.ReportMetric(float64((testutil.CPUTime()-cpu).Nanoseconds())/float64(b.N*len(set.Base))/1e3, "cpu-µs/insert")
}

func BenchmarkDistance(b *testing.B) {
	set := vectest.Generate(vectest.Clustered(2, 0, 384))
	x, y := set.Base[0], set.Base[1]
	var s float32
	for b.Loop() {
		s += dot(x, y)
	}
	_ = s
}

// BenchmarkSearch against BenchmarkExactScan: the graph search and the scan
// it replaces, on the same 10,000 vectors of 384 dimensions. cpu-ns/op is
// the CPU time of the whole process a search (steadier than the wall time
// on a loaded machine).
func BenchmarkSearch(b *testing.B) {
	g, set := benchGraph(b)
	i := 0
	cpu := testutil.CPUTime()
	for b.Loop() {
		_, _ = g.Search(set.Queries[i%len(set.Queries)], SearchOptions{K: 10, Ef: 64})
		i++
	}
	b.ReportMetric(float64((testutil.CPUTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

func BenchmarkExactScan(b *testing.B) {
	g, set := benchGraph(b)
	i := 0
	cpu := testutil.CPUTime()
	for b.Loop() {
		_, _ = g.Search(set.Queries[i%len(set.Queries)], SearchOptions{K: 10, Subset: allIDs(g.Len()), ExactBelow: 1 << 30})
		i++
	}
	b.ReportMetric(float64((testutil.CPUTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

var benchG struct {
	g   *Graph
	set *vectest.Set
}

func benchGraph(b *testing.B) (*Graph, *vectest.Set) {
	if benchG.g == nil {
		benchG.set = vectest.Generate(vectest.Clustered(10000, 100, 384))
		benchG.g, _ = New(Config{Dim: 384, Metric: Cosine, Seed: 1})
		for i, v := range benchG.set.Base {
			_ = benchG.g.Insert(uint32(i), v)
		}
	}
	b.ResetTimer()
	return benchG.g, benchG.set
}

func allIDs(n int) []uint32 {
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = uint32(i)
	}
	return ids
}

// BenchmarkFilteredScan: the exact scan a 10 % filter takes on 100,000
// clustered vectors of 384 dimensions (every tenth id, as a metadata
// filter's posting list), on one goroutine and split across GOMAXPROCS;
// "shuffled" is the split scan of the same ids out of slot order; ids=n
// scan the first n of them on one goroutine and on two. The
// graph is built with small M and ef, as the scan does not walk it.
// cpu-ns/op is the CPU time of the whole process a scan (other goroutines
// of the test binary are idle).
func BenchmarkFilteredScan(b *testing.B) {
	if benchScan.g == nil {
		benchScan.set = vectest.Generate(vectest.Clustered(100000, 200, 384))
		benchScan.g, _ = New(Config{Dim: 384, Metric: Cosine, M: 4, EfConstruction: 8, Seed: 1})
		_ = benchScan.g.InsertBatch(allIDs(len(benchScan.set.Base)), benchScan.set.Base, 0)
	}
	g, set := benchScan.g, benchScan.set
	ids := make([]uint32, 0, len(set.Base)/10)
	for i := 3; i < len(set.Base); i += 10 {
		ids = append(ids, uint32(i))
	}
	shuffled := slices.Clone(ids)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	run := func(name string, ids []uint32, workers int) {
		b.Run(name, func(b *testing.B) {
			s := g.getScratchFor(g.n)
			defer g.putScratch(s)
			i := 0
			cpu := testutil.CPUTime()
			for b.Loop() {
				q, _ := g.prepare(set.Queries[i%len(set.Queries)], nil)
				_ = g.exactSplit(s, q, 1, 10, ids, nil, workers)
				i++
			}
			b.ReportMetric(float64((testutil.CPUTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
	run("goroutines=1", ids, 1)
	run("goroutines=GOMAXPROCS", ids, scanWorkers(len(ids)))
	run("shuffled", shuffled, scanWorkers(len(ids)))
	// Where splitting starts to pay: the first n ids of the list.
	for _, n := range []int{500, 1000, 2000, 4000} {
		run(fmt.Sprintf("ids=%d/goroutines=1", n), ids[:n], 1)
		run(fmt.Sprintf("ids=%d/goroutines=2", n), ids[:n], 2)
	}
}

var benchScan struct {
	g   *Graph
	set *vectest.Set
}

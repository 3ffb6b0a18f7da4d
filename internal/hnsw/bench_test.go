package hnsw

import (
	"testing"

	"github.com/snkv-go/snkv/internal/vectest"
)

func BenchmarkInsert(b *testing.B) {
	set := vectest.Generate(vectest.Clustered(10000, 0, 384))
	b.ResetTimer()
	for b.Loop() {
		g, _ := New(Config{Dim: 384, Metric: Cosine, Seed: 1})
		for i, v := range set.Base {
			_ = g.Insert(uint32(i), v)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(set.Base))/1e3, "µs/insert")
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
// it replaces, on the same 10,000 vectors of 384 dimensions.
func BenchmarkSearch(b *testing.B) {
	g, set := benchGraph(b)
	i := 0
	for b.Loop() {
		_, _ = g.Search(set.Queries[i%len(set.Queries)], SearchOptions{K: 10, Ef: 64})
		i++
	}
}

func BenchmarkExactScan(b *testing.B) {
	g, set := benchGraph(b)
	i := 0
	for b.Loop() {
		_, _ = g.Search(set.Queries[i%len(set.Queries)], SearchOptions{K: 10, Subset: allIDs(g.Len()), ExactBelow: 1 << 30})
		i++
	}
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

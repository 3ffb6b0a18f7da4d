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

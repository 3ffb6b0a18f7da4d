package vector_test

import (
	"fmt"
	"testing"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/internal/vectest"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
)

// BenchmarkPutBatch against BenchmarkPlainPutBatch: 1,000 vectors of 384
// dimensions a transaction, through the index, and as plain rows of a
// column family (the float32 bytes as values) in the same kind of
// transaction.
func BenchmarkPutBatch(b *testing.B) {
	set := vectest.Generate(vectest.Clustered(1000, 0, 384))
	db, _ := tempStore(b, kvstore.Options{})
	ix := openIndex(b, db, "v", vector.Options{Dim: 384, Metric: vector.Cosine})
	benchRounds(b, len(set.Base), func(round int) error {
		items := make([]vector.Item, len(set.Base))
		for i, v := range set.Base {
			items[i] = vector.Item{Key: []byte(fmt.Sprintf("%d-%d", round, i)), Vector: v}
		}
		return ix.PutBatch(ctx, items)
	})
}

func BenchmarkPlainPutBatch(b *testing.B) {
	set := vectest.Generate(vectest.Clustered(1000, 0, 384))
	db, _ := tempStore(b, kvstore.Options{})
	benchRounds(b, len(set.Base), func(round int) error {
		return db.Update(ctx, func(tx *kvstore.Tx) error {
			for i, v := range set.Base {
				if err := tx.Put([]byte(fmt.Sprintf("%d-%d", round, i)), floatBytes(v)); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// benchRounds runs write(0), write(1), … as the benchmark's loop and
// reports the vectors written a second (n a round).
func benchRounds(b *testing.B, n int, write func(round int) error) {
	round := 0
	for b.Loop() {
		if err := write(round); err != nil {
			b.Fatal(err)
		}
		round++
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "vectors/s")
}

// BenchmarkSearch: searches of an index of 20,000 vectors of 384
// dimensions, unfiltered and filtered, through the store (the check for other processes' commits
// included); internal/hnsw's BenchmarkExactScan is the scan it replaces.
// cpu-µs/op is the CPU time of the whole process a search.
func BenchmarkSearch(b *testing.B) {
	set := vectest.Generate(vectest.Clustered(20000, 100, 384))
	db, _ := tempStore(b, kvstore.Options{})
	ix := openIndex(b, db, "v", vector.Options{Dim: 384, Metric: vector.Cosine})
	fill(b, ix, set.Base, 1000, func(i int) map[string]string {
		return map[string]string{"p10": fmt.Sprint(i % 10), "p100": fmt.Sprint(i % 100)}
	})
	for _, bc := range []struct {
		name string
		q    vector.Query
	}{
		{"all", vector.Query{K: 10}},
		{"where-10%", vector.Query{K: 10, Where: map[string]string{"p10": "3"}}},
		{"where-1%", vector.Query{K: 10, Where: map[string]string{"p100": "42"}}},
		{"prefix-0.4%", vector.Query{K: 10, Prefix: []byte{'k', 0, 0}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			i := 0
			cpu := testutil.CPUTime()
			for b.Loop() {
				if _, err := ix.Search(ctx, set.Queries[i%len(set.Queries)], bc.q); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64((testutil.CPUTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// savedIndex makes a store with opts holding index "v" (384 dimensions,
// cosine) of base, closed cleanly with every link saved, and returns its
// path.
func savedIndex(b *testing.B, base [][]float32, opts kvstore.Options) string {
	b.Helper()
	db, path := tempStore(b, opts)
	ix, err := vector.Open(b.Context(), db, "v", vector.Options{Dim: 384, Metric: vector.Cosine})
	if err != nil {
		b.Fatal(err)
	}
	fill(b, ix, base, 1000, nil)
	if err := ix.Close(); err != nil {
		b.Fatal(err)
	}
	_ = db.Close()
	return path
}

// BenchmarkOpen: opening an index of 20,000 vectors of 384 dimensions whose
// links were all saved (a clean open: read every row, load the graph), in
// a store in the clear and in an encrypted one (a raw key: no key
// derivation). It reports the wall time and the CPU time of the process a
// vector (two cores read the tables).
func BenchmarkOpen(b *testing.B) {
	set := vectest.Generate(vectest.Clustered(20000, 0, 384))
	for _, enc := range []*kvstore.Encryption{nil, {Key: make([]byte, 32)}} {
		name := "clear"
		if enc != nil {
			name = "encrypted"
		}
		b.Run(name, func(b *testing.B) {
			path := savedIndex(b, set.Base, kvstore.Options{Encryption: enc})
			db := openStore(b, path, kvstore.Options{Encryption: enc})
			b.ResetTimer()
			cpu := testutil.CPUTime()
			for b.Loop() {
				ix, err := vector.Open(ctx, db, "v", vector.Options{})
				if err != nil {
					b.Fatal(err)
				}
				_ = ix.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/20000, "µs/vector")
			b.ReportMetric(float64((testutil.CPUTime()-cpu).Microseconds())/float64(b.N)/20000, "cpu-µs/vector")
		})
	}
}

// BenchmarkPut: one vector of 384 dimensions per transaction into an index
// of 10,000, against BenchmarkPlainPut, the same bytes as one plain row.
func BenchmarkPut(b *testing.B) {
	set := vectest.Generate(vectest.Clustered(10000, 0, 384))
	db, _ := tempStore(b, kvstore.Options{})
	ix := openIndex(b, db, "v", vector.Options{Dim: 384, Metric: vector.Cosine})
	fill(b, ix, set.Base, 1000, nil)
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if err := ix.Put(ctx, []byte(fmt.Sprintf("single-%d", i)), set.Base[i%len(set.Base)], vector.Put{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkPlainPut(b *testing.B) {
	set := vectest.Generate(vectest.Clustered(1000, 0, 384))
	db, _ := tempStore(b, kvstore.Options{})
	i := 0
	for b.Loop() {
		if err := db.Put([]byte(fmt.Sprintf("single-%d", i)), floatBytes(set.Base[i%len(set.Base)])); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkSearchInt8: searches of an index of 20,000 vectors of 384
// dimensions held as int8 in memory, reranked by the stored float32
// vectors, against the same index held as float32.
func BenchmarkSearchInt8(b *testing.B) {
	set := vectest.Generate(vectest.Clustered(20000, 100, 384))
	for _, st := range []vector.Storage{vector.F32, vector.Int8} {
		b.Run(st.String(), func(b *testing.B) {
			db, _ := tempStore(b, kvstore.Options{})
			ix := openIndex(b, db, "v", vector.Options{Dim: 384, Metric: vector.Cosine, Storage: st})
			fill(b, ix, set.Base, 1000, nil)
			b.ResetTimer()
			cpu := testutil.CPUTime()
			i := 0
			for b.Loop() {
				if _, err := ix.Search(ctx, set.Queries[i%len(set.Queries)], vector.Query{K: 10}); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64((testutil.CPUTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

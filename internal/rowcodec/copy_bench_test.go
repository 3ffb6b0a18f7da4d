package rowcodec

import (
	"testing"

	"github.com/snkv-go/snkv/internal/testutil"
)

// copySink keeps the benchmark's last copies reachable, as a caller that
// looks at each row does, so the compiler cannot drop the copy.
var copySink [2][]byte

// BenchmarkCopyFloor is what a copying scan pays a row beyond a lending
// one with no B-tree at all: the key and value of a row (16 and 100 bytes,
// SNKV's benchmark rows) carved from the same blocks a scan uses
// (Buffers.alloc) and copied in, each copy then dropped, as a loop that
// looks at each row and keeps none does. The collector's work for the
// bytes handed out is counted in cpu-ns/op (the process's CPU time, its
// background workers included), which is the figure to compare with the
// difference between BenchmarkRead/Scan and BenchmarkRead/ScanBorrow in
// package kvstore: no copying scan can cost less over a lending one than
// this row does.
//
//	go test -run '^$' -bench CopyFloor -benchtime 20000000x -count 5 ./internal/rowcodec/
func BenchmarkCopyFloor(b *testing.B) {
	for _, size := range []struct {
		name       string
		key, value int
	}{{"116B", 16, 100}, {"1040B", 16, 1024}} {
		b.Run(size.name, func(b *testing.B) {
			src := make([]byte, size.key+size.value)
			for i := range src {
				src[i] = byte(i)
			}
			var bufs Buffers
			b.SetBytes(int64(len(src)))
			cpu := testutil.CPUTime()
			for b.Loop() {
				row := bufs.alloc(len(src))
				copy(row, src)
				copySink[0], copySink[1] = row[:size.key:size.key], row[size.key:]
			}
			if end := testutil.CPUTime(); end > 0 {
				b.ReportMetric(float64(end-cpu)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

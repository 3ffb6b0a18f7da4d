//go:build amd64 && !purego

package hnsw

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The float32 kernels in assembly (kernel_amd64.s) for CPUs with AVX2 and
// FMA: eight lanes a register, four registers in flight. Elsewhere, and
// with the purego build tag, the pure-Go kernels of distance.go run; the
// tests compare the two on every build.

var haveAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dotAVX2(a, b *float32, n int) float32

//go:noescape
func l2AVX2(a, b *float32, n int) float32

// dotI8AVX2 widens eight int8 at a time to float32; n is a multiple of 8.
//
//go:noescape
func dotI8AVX2(a *float32, b *int8, n int) float32

// prefetchAVX2 asks for the n bytes from p to be brought into the cache
// (a hint: it reads nothing and cannot fault).
//
//go:noescape
func prefetchAVX2(p *byte, n int)

// prefetch hints that v is about to be read: an exact scan of scattered
// ids asks for the next vector while computing the distance to this one
// (each one's first lines otherwise miss the cache).
func prefetch(v []float32) {
	if len(v) > 0 {
		prefetchAVX2((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
	}
}

// dot returns a·b; b is at least as long as a.
func dot(a, b []float32) float32 {
	if haveAVX2 && len(a) >= 8 {
		_ = b[len(a)-1]
		return dotAVX2(&a[0], &b[0], len(a))
	}
	return dotGo(a, b)
}

// l2 returns |a − b|²; b is at least as long as a.
func l2(a, b []float32) float32 {
	if haveAVX2 && len(a) >= 8 {
		_ = b[len(a)-1]
		return l2AVX2(&a[0], &b[0], len(a))
	}
	return l2Go(a, b)
}

// dotI8 returns a·b for an f32 a and an int8 b at least as long.
func dotI8(a []float32, b []int8) float32 {
	if haveAVX2 && len(a) >= 8 {
		n := len(a) &^ 7
		_ = b[len(a)-1]
		s := dotI8AVX2(&a[0], &b[0], n)
		for i := n; i < len(a); i++ {
			s += a[i] * float32(b[i])
		}
		return s
	}
	return dotI8Go(a, b)
}

// kernel names the kernels in use, for benchmark reports.
func kernel() string {
	if haveAVX2 {
		return "avx2"
	}
	return "go"
}

package hnsw

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The kernels in use (assembly where the CPU has it) agree with the pure-Go
// ones, which every build also tests here, on every length and alignment.
func TestKernelsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 130; n++ {
		for off := range 3 {
			a, b := make([]float32, n+off), make([]float32, n+off)
			for i := range a {
				a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			}
			a, b = a[off:], b[off:]
			var wd, wl float64
			for i := range a {
				wd += float64(a[i]) * float64(b[i])
				wl += (float64(a[i]) - float64(b[i])) * (float64(a[i]) - float64(b[i]))
			}
			tol := 1e-4 * math.Max(1, math.Abs(wd)+float64(n))
			require.InDelta(t, wd, float64(dotGo(a, b)), tol, "dotGo n=%d", n)
			require.InDelta(t, wl, float64(l2Go(a, b)), tol, "l2Go n=%d", n)
			require.InDelta(t, wd, float64(dot(a, b)), tol, "dot (%s) n=%d", kernel(), n)
			require.InDelta(t, wl, float64(l2(a, b)), tol, "l2 (%s) n=%d", kernel(), n)

			q := make([]int8, n+off)
			for i := range q {
				q[i] = int8(rng.IntN(255) - 127)
			}
			q = q[off:]
			var wq float64
			for i := range a {
				wq += float64(a[i]) * float64(q[i])
			}
			tq := 1e-4 * math.Max(1, math.Abs(wq)+127*float64(n))
			require.InDelta(t, wq, float64(dotI8Go(a, q)), tq, "dotI8Go n=%d", n)
			require.InDelta(t, wq, float64(dotI8(a, q)), tq, "dotI8 (%s) n=%d", kernel(), n)
		}
	}
}

// BenchmarkKernel compares the kernel in use with the pure-Go one on 384
// dimensions.
func BenchmarkKernel(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := make([]float32, 384), make([]float32, 384)
	for i := range x {
		x[i], y[i] = rng.Float32(), rng.Float32()
	}
	var s float32
	b.Run("dot/"+kernel(), func(b *testing.B) {
		for b.Loop() {
			s += dot(x, y)
		}
	})
	b.Run("dot/go", func(b *testing.B) {
		for b.Loop() {
			s += dotGo(x, y)
		}
	})
	b.Run("l2/"+kernel(), func(b *testing.B) {
		for b.Loop() {
			s += l2(x, y)
		}
	})
	b.Run("l2/go", func(b *testing.B) {
		for b.Loop() {
			s += l2Go(x, y)
		}
	})
	q := make([]int8, 384)
	for i := range q {
		q[i] = int8(rng.IntN(255) - 127)
	}
	b.Run("dotI8/"+kernel(), func(b *testing.B) {
		for b.Loop() {
			s += dotI8(x, q)
		}
	})
	b.Run("dotI8/go", func(b *testing.B) {
		for b.Loop() {
			s += dotI8Go(x, q)
		}
	})
	_ = s
}

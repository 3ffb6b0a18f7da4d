// Package vectest generates the seeded vector data sets that snkv's vector
// search is tested and measured on, and their exact nearest neighbours.
//
// A data set is a Gaussian mixture in a latent space, mapped to the output
// dimension by a fixed random matrix, plus isotropic noise, every vector
// scaled to unit length:
//
//	z = c_j + Spread·g          (c_j ~ N(0, I_L) one of Clusters centres, g ~ N(0, I_L))
//	s = A z / |A z|             (A: Dim × Latent, entries N(0, 1))
//	x = (s + Noise·e) / |s + Noise·e|   (e ~ N(0, I_Dim/Dim), so |e| ≈ 1)
//
// Clustered and Hard are the two sets the targets of docs/vector.md name.
// Every number is drawn from math/rand/v2's PCG seeded with Config.Seed, in
// a fixed order, so a Config always gives the same vectors on every platform.
package vectest

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
)

// Config describes a data set.
type Config struct {
	N        int     // vectors in the base set
	Queries  int     // query vectors, drawn from the same mixture
	Dim      int     // output dimension
	Latent   int     // dimension of the latent space
	Clusters int     // mixture components
	Spread   float64 // standard deviation of a point around its centre, in latent units
	Noise    float64 // norm of the isotropic noise relative to the (unit) signal
	Seed     uint64
}

// Clustered is the "clustered" set: 1,000 clusters in a 64-d latent space,
// 10 % noise.
func Clustered(n, queries, dim int) Config {
	return Config{N: n, Queries: queries, Dim: dim, Latent: 64, Clusters: 1000, Spread: 0.5, Noise: 0.1, Seed: 1}
}

// Hard is the "hard" set: 100 overlapping clusters in a latent space as
// wide as the output (384 for 384-d), and isotropic noise of 1.65 times the
// signal's norm. The noise is calibrated so that an HNSW graph of M 16
// (efConstruction 128) over 100,000 vectors of 384 dimensions reaches the
// recall@10 the targets name for this set, about 0.91 at ef 64 and 0.97 at
// ef 128: measured 0.916 and 0.9645 (0.956 at ef 96, 0.973 at ef 256).
// With the 50 % noise first specified the set was easier than that (0.9645
// at ef 64, 0.9985 at 128); 1.5 gives 0.9385 / 0.987, 1.75 gives 0.8745 /
// 0.944. Widening the clusters (Spread) instead flattens the curve: at
// Spread 2.0, 0.9275 at ef 64 but only 0.9625 at 128 and 0.9855 at 512.
func Hard(n, queries, dim int) Config {
	return Config{N: n, Queries: queries, Dim: dim, Latent: dim, Clusters: 100, Spread: 1.0, Noise: 1.65, Seed: 2}
}

// Set is a generated data set.
type Set struct {
	Config  Config
	Base    [][]float32 // N unit vectors
	Queries [][]float32 // Queries unit vectors
}

// Generate builds the data set of c. Its cost is O((N + Queries) · Dim ·
// Latent).
func Generate(c Config) *Set {
	rng := rand.New(rand.NewPCG(c.Seed, c.Seed^0x9e3779b97f4a7c15))
	a := make([]float64, c.Dim*c.Latent)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	centres := make([]float64, c.Clusters*c.Latent)
	for i := range centres {
		centres[i] = rng.NormFloat64()
	}
	g := &gen{c: c, a: a, centres: centres, z: make([]float64, c.Latent), s: make([]float64, c.Dim)}
	set := &Set{Config: c, Base: make([][]float32, c.N), Queries: make([][]float32, c.Queries)}
	for i := range set.Base {
		set.Base[i] = g.point(rng)
	}
	qrng := rand.New(rand.NewPCG(c.Seed+1, c.Seed^0x94d049bb133111eb))
	for i := range set.Queries {
		set.Queries[i] = g.point(qrng)
	}
	return set
}

type gen struct {
	c          Config
	a, centres []float64
	z, s       []float64
}

func (g *gen) point(rng *rand.Rand) []float32 {
	c := g.c
	j := rng.IntN(c.Clusters)
	for k := range g.z {
		g.z[k] = g.centres[j*c.Latent+k] + c.Spread*rng.NormFloat64()
	}
	var n2 float64
	for d := range g.s {
		row := g.a[d*c.Latent : (d+1)*c.Latent]
		var v float64
		for k, zk := range g.z {
			v += row[k] * zk
		}
		g.s[d] = v
		n2 += v * v
	}
	inv := 1 / math.Sqrt(n2)
	sd := c.Noise / math.Sqrt(float64(c.Dim))
	out := make([]float32, c.Dim)
	n2 = 0
	for d := range g.s {
		v := g.s[d]*inv + sd*rng.NormFloat64()
		g.s[d] = v
		n2 += v * v
	}
	inv = 1 / math.Sqrt(n2)
	for d := range out {
		out[d] = float32(g.s[d] * inv)
	}
	return out
}

// Metric is the distance the ground truth is computed with.
type Metric int

// The metrics of the ground truth, as package vector defines them.
const (
	L2     Metric = iota // squared Euclidean distance
	Cosine               // 1 − cos(a, b)
	Dot                  // 1 − a·b
)

// Distance returns the distance between a and b under m, in float64.
func Distance(m Metric, a, b []float32) float64 {
	var dot, na, nb, l2 float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
		l2 += (x - y) * (x - y)
	}
	switch m {
	case L2:
		return l2
	case Cosine:
		if na == 0 || nb == 0 {
			return 1
		}
		return 1 - dot/math.Sqrt(na*nb)
	default:
		return 1 - dot
	}
}

// Neighbour is one exact neighbour: the index of a base vector and its
// distance to the query.
type Neighbour struct {
	ID   int
	Dist float64
}

// Truth returns, for every query, its k nearest base vectors under m, nearest
// first (ties broken by the smaller index), computed by an exact scan on
// every core. allow, when not nil, keeps only the base vectors it accepts.
// Cost: O(Queries · N · Dim).
func Truth(base, queries [][]float32, k int, m Metric, allow func(id int) bool) [][]Neighbour {
	out := make([][]Neighbour, len(queries))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for q := range next {
				out[q] = Exact(base, queries[q], k, m, allow)
			}
		}()
	}
	for q := range queries {
		next <- q
	}
	close(next)
	wg.Wait()
	return out
}

// Exact returns the k nearest base vectors to q under m, nearest first.
func Exact(base [][]float32, q []float32, k int, m Metric, allow func(id int) bool) []Neighbour {
	h := make(maxHeap, 0, k+1)
	for i, v := range base {
		if allow != nil && !allow(i) {
			continue
		}
		d := Distance(m, q, v)
		if len(h) < k {
			heap.Push(&h, Neighbour{i, d})
		} else if less(Neighbour{i, d}, h[0]) {
			h[0] = Neighbour{i, d}
			heap.Fix(&h, 0)
		}
	}
	res := make([]Neighbour, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		res[i] = heap.Pop(&h).(Neighbour)
	}
	return res
}

// Recall returns the fraction of the true neighbours that got holds: the mean over
// queries of |got ∩ truth| / |truth|.
func Recall(got [][]int, truth [][]Neighbour) float64 {
	var sum float64
	n := 0
	for q := range truth {
		if len(truth[q]) == 0 {
			continue
		}
		want := make(map[int]bool, len(truth[q]))
		for _, t := range truth[q] {
			want[t.ID] = true
		}
		hit := 0
		for _, id := range got[q] {
			if want[id] {
				hit++
			}
		}
		sum += float64(hit) / float64(len(truth[q]))
		n++
	}
	if n == 0 {
		return 1
	}
	return sum / float64(n)
}

func less(a, b Neighbour) bool { return a.Dist < b.Dist || (a.Dist == b.Dist && a.ID < b.ID) }

type maxHeap []Neighbour

func (h maxHeap) Len() int           { return len(h) }
func (h maxHeap) Less(i, j int) bool { return less(h[j], h[i]) }
func (h maxHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *maxHeap) Push(x any)        { *h = append(*h, x.(Neighbour)) }
func (h *maxHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

package vectest

import (
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGenerateIsDeterministicAndUnit(t *testing.T) {
	for _, c := range []Config{Clustered(300, 10, 32), Hard(300, 10, 32)} {
		a, b := Generate(c), Generate(c)
		require.Equal(t, a.Base, b.Base, "same seed, same vectors")
		require.Equal(t, a.Queries, b.Queries)
		require.Len(t, a.Base, 300)
		require.Len(t, a.Queries, 10)
		for _, v := range append(a.Base, a.Queries...) {
			require.Len(t, v, 32)
			var n float64
			for _, x := range v {
				n += float64(x) * float64(x)
			}
			require.InDelta(t, 1, n, 1e-5)
		}
		c.Seed++
		require.NotEqual(t, a.Base[0], Generate(c).Base[0], "another seed, other vectors")
	}
}

// The clustered set must be clustered: a point's nearest neighbour is much
// nearer than a random point; the hard set much less so.
func TestClusteredIsTighterThanHard(t *testing.T) {
	ratio := func(s *Set) float64 {
		var nn, rnd float64
		for i, q := range s.Queries {
			nn += Exact(s.Base, q, 1, Cosine, nil)[0].Dist
			rnd += Distance(Cosine, q, s.Base[(i*7919)%len(s.Base)])
		}
		return nn / rnd
	}
	c := ratio(Generate(Clustered(2000, 20, 64)))
	h := ratio(Generate(Hard(2000, 20, 64)))
	require.Less(t, c, 0.3, "clustered: nearest/random distance")
	require.Greater(t, h, c, "hard is harder than clustered")
}

func TestExactMatchesSort(t *testing.T) {
	s := Generate(Hard(500, 5, 16))
	for _, m := range []Metric{L2, Cosine, Dot} {
		for _, q := range s.Queries {
			all := make([]Neighbour, len(s.Base))
			for i, v := range s.Base {
				all[i] = Neighbour{i, Distance(m, q, v)}
			}
			sort.Slice(all, func(i, j int) bool { return less(all[i], all[j]) })
			require.Equal(t, all[:10], Exact(s.Base, q, 10, m, nil))
		}
	}
	even := func(id int) bool { return id%2 == 0 }
	got := Truth(s.Base, s.Queries, 7, Cosine, even)
	for q, ns := range got {
		require.Len(t, ns, 7)
		for _, n := range ns {
			require.True(t, even(n.ID))
		}
		require.Equal(t, Exact(s.Base, s.Queries[q], 7, Cosine, even), ns)
	}
}

func TestDistanceAndRecall(t *testing.T) {
	a, b := []float32{1, 0}, []float32{0, 2}
	require.InDelta(t, 5, Distance(L2, a, b), 1e-12)
	require.InDelta(t, 1, Distance(Cosine, a, b), 1e-12)
	require.InDelta(t, 1, Distance(Dot, a, b), 1e-12)
	require.InDelta(t, 1-math.Sqrt(0.5), Distance(Cosine, a, []float32{1, 1}), 1e-12)
	truth := [][]Neighbour{{{1, 0}, {2, 0}}, {{3, 0}, {4, 0}}}
	require.InDelta(t, 0.75, Recall([][]int{{1, 2}, {4, 9}}, truth), 1e-12)
}

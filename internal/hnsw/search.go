package hnsw

import (
	"fmt"
	"math"
	"slices"
)

// Result is one neighbour found by Search.
type Result struct {
	ID   uint32
	Dist float32
}

// SearchOptions configures Search.
type SearchOptions struct {
	// K is the number of neighbours wanted (at least 1).
	K int
	// Ef is the candidate list of the graph search; below K it is K.
	Ef int
	// Allow, when not nil, accepts the ids a search may return (it is
	// called under the graph's read lock, from the searching goroutine).
	Allow func(id uint32) bool
	// Subset, when not nil, is every id the search may return (Allow still
	// applies): an exact scan of it when it is short. When it is long the
	// search walks the graph with Allow as the filter, so Allow must then
	// itself reject the ids outside Subset (without Allow, a set of Subset
	// is built for the search).
	Subset []uint32
	// ExactBelow is the estimated number of matching vectors at or below
	// which a filtered search is an exact scan; 0 means 2 · Ef · 2M.
	ExactBelow int
}

// Search returns the K nearest live nodes to q that the options accept,
// nearest first: min(K, matching) of them. It fails with ErrDim or
// ErrVector for a bad query. It is SearchQuery of NewQuery(q).
func (g *Graph) Search(q []float32, o SearchOptions) ([]Result, error) {
	pq, err := NewQuery(q, g.cfg.Dim, g.cfg.Metric)
	if err != nil {
		return nil, err
	}
	defer pq.Release()
	return g.SearchQuery(pq, o)
}

// SearchQuery returns the K nearest live nodes to q (made by NewQuery for
// the graph's dimension and metric; ErrDim otherwise) that the options
// accept, nearest first: min(K, matching) of them. Safe for concurrent use
// with other searches (of other Queries) and with the linking of staged
// nodes (which it never returns); it waits for staging, publishing and
// deletes. Cost: about Ef · 2M distance computations for an unfiltered
// search; a filter that matches a fraction p costs about 1/p times more,
// up to an exact scan of the matching nodes.
func (g *Graph) SearchQuery(q *Query, o SearchOptions) ([]Result, error) {
	if len(q.v) != g.cfg.Dim || q.metric != g.cfg.Metric {
		return nil, fmt.Errorf("%w: a query for %d dimensions, metric %d; the graph has %d, metric %d", ErrDim, len(q.v), q.metric, g.cfg.Dim, g.cfg.Metric)
	}
	if o.K < 1 {
		return nil, nil
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	s := g.getScratchFor(g.n)
	defer g.putScratch(s)
	qp, qn2 := q.v, q.n2
	// No search returns more than the graph's slots: K and Ef beyond them
	// are cut to them, so that a huge K does not size a heap by itself.
	slots := max(int(g.n), 1)
	k := min(o.K, slots)
	oEf := min(o.Ef, slots)
	ef := max(oEf, k)
	allow := o.Allow
	exactBelow := o.ExactBelow
	if exactBelow <= 0 {
		exactBelow = 2 * max(oEf, 16) * g.m0
	}
	var items []item
	_, top := g.entryPoint()
	switch {
	case g.live == 0 || top < 0:
	case o.Subset != nil && len(o.Subset) <= exactBelow:
		items = g.exact(s, qp, qn2, k, o.Subset, allow)
	case o.Subset != nil || allow != nil:
		// The exact scan costs a distance per match (and, without a
		// subset, a cheap filter call per node); the graph search gets
		// that many distances, and the exact scan takes over when it runs
		// out or finds fewer than K.
		var est, budget int
		if o.Subset != nil {
			if allow == nil {
				allow = subsetFilter(o.Subset, nil)
			}
			est = len(o.Subset)
			budget = est
		} else {
			est = g.estimate(allow)
			budget = est + int(g.n)/8
		}
		if est <= exactBelow || budget <= filteredWalk(ef, g.m0, int(g.live), est) {
			items = g.exact(s, qp, qn2, k, o.Subset, allow)
			break
		}
		s.budget, s.exhausted = max(budget, 1), false
		items = g.graphSearch(s, qp, qn2, ef, allow)
		exhausted := s.exhausted
		s.budget = 0
		if exhausted || len(items) < k {
			items = g.exact(s, qp, qn2, k, o.Subset, allow)
		}
	default:
		items = g.graphSearch(s, qp, qn2, ef, nil)
	}
	if len(items) > k {
		items = items[:k]
	}
	out := make([]Result, 0, len(items))
	for _, it := range items {
		out = append(out, Result{it.id, it.d})
	}
	return out, nil
}

// SatMul returns a · b for non-negative a and b, or math.MaxInt where the
// product overflows.
func SatMul(a, b int) int {
	if a != 0 && b > math.MaxInt/a {
		return math.MaxInt
	}
	return a * b
}

// filteredWalk estimates the distances a graph search computes to gather
// ef candidates when est of live nodes match its filter: an unfiltered
// search computes about ef · m0, and a filter the walk's nodes pass with
// probability est/live makes it walk live/est times farther. When the
// exact scan of the matches costs no more, it is taken at once (a 10 %
// filter on 100,000 clustered vectors walked until its budget ran out,
// then scanned: twice the scan).
func filteredWalk(ef, m0, live, est int) int {
	if est <= 0 {
		return math.MaxInt
	}
	return int(min(float64(ef)*float64(m0)*float64(live)/float64(est), math.MaxInt32))
}

func (g *Graph) graphSearch(s *scratch, q []float32, qn2 float32, ef int, allow func(uint32) bool) []item {
	entry, top := g.entryPoint()
	ep := item{g.dist(q, qn2, entry), entry}
	for l := top; l > 0; l-- {
		ep = g.greedy(q, qn2, ep, l)
	}
	return slices.Clone(g.searchLayer(s, q, qn2, []item{ep}, ef, 0, allow, true))
}

// estimate returns the estimated number of live nodes allow accepts, from a
// sample of up to 512 slots spread over the id range.
func (g *Graph) estimate(allow func(uint32) bool) int {
	const sample = 512
	if g.n <= sample {
		n := 0
		for id := uint32(0); id < g.n; id++ {
			if g.returnable(id) && allow(id) {
				n++
			}
		}
		return n
	}
	seen, hit := 0, 0
	step := float64(g.n) / sample
	for i := range sample {
		id := uint32(float64(i) * step)
		if !g.returnable(id) {
			continue
		}
		seen++
		if allow(id) {
			hit++
		}
	}
	if seen == 0 {
		return 0
	}
	return int(float64(hit) / float64(seen) * float64(g.live))
}

// subsetFilter accepts the ids of subset that allow accepts.
func subsetFilter(subset []uint32, allow func(uint32) bool) func(uint32) bool {
	in := make(map[uint32]struct{}, len(subset))
	for _, id := range subset {
		in[id] = struct{}{}
	}
	return func(id uint32) bool {
		if _, ok := in[id]; !ok {
			return false
		}
		return allow == nil || allow(id)
	}
}

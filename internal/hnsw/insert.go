package hnsw

import "fmt"

// Insert adds v as node id, or replaces the node id holds (its vector,
// links and tombstone; it keeps its level): the caller assigns ids, densely
// from 0 for the best memory use. It fails with ErrDim or ErrVector for a bad vector. Cost:
// O(EfConstruction · M · log n) distance computations; it holds the write
// lock throughout.
func (g *Graph) Insert(id uint32, v []float32) error {
	if id == ^uint32(0) {
		return fmt.Errorf("hnsw: id %d out of range", id)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.getScratchFor(id + 1)
	defer g.putScratch(s)
	q, err := g.prepare(v, s.q)
	if err != nil {
		return err
	}
	s.q = q
	g.grow(id + 1)
	level := g.randomLevel()
	if old := int(g.levels[id]); old >= 0 {
		// A node taken over keeps its level: links of others to it, at
		// any level up to it, stay valid.
		g.unlink(id)
		level = old
	}
	g.setLevel(id, level)
	g.store(id, q)
	qn2 := dot(q, q)
	g.live++
	g.markDirty(id)
	for l := 0; l <= level; l++ {
		b := g.links(id, l)
		b[0] = 0
	}
	if g.top < 0 || g.live == 1 {
		// The first live node (tombstones, if any, are left behind:
		// nothing live is reachable only through them).
		g.entry, g.top = id, level
		return nil
	}
	ep := item{g.dist(q, qn2, g.entry), g.entry}
	for l := g.top; l > level; l-- {
		ep = g.greedy(q, qn2, ep, l)
	}
	eps := append(s.tmp[:0], ep)
	for l := min(level, g.top); l >= 0; l-- {
		w := g.searchLayer(s, q, qn2, eps, g.cfg.EfConstruction, l, nil, true)
		mmax := g.m
		if l == 0 {
			mmax = g.m0
		}
		sel := g.selectHeuristic(s, w, g.m)
		ids := s.ids[:0]
		for _, it := range sel {
			ids = append(ids, it.id)
		}
		g.setNeighbours(id, l, ids)
		for _, it := range sel {
			g.addLink(s, it.id, id, it.d, l, mmax)
		}
		s.ids = ids
		eps = append(eps[:0], w...)
	}
	s.tmp = eps
	if level > g.top {
		g.entry, g.top = id, level
	}
	return nil
}

// getScratchFor returns scratch whose visited array covers ids below n.
func (g *Graph) getScratchFor(n uint32) *scratch {
	s := g.getScratch()
	if len(s.visited) < int(n) {
		s.visited = make([]uint32, int(n)+chunkSize)
		s.gen = 1
	}
	return s
}

// unlink empties the slot of id before it is inserted again: its own links
// go (links of others that point to it stay and now lead to the new vector,
// as in hnswlib's replacement of deleted elements).
func (g *Graph) unlink(id uint32) {
	if bit(g.deleted, id) {
		clearBit(g.deleted, id)
		g.tombs--
	} else {
		g.live--
	}
	if g.entry == id {
		g.pickEntry(id)
	}
}

// greedy walks level l from ep to the nearest node it can reach.
func (g *Graph) greedy(q []float32, qn2 float32, ep item, l int) item {
	for changed := true; changed; {
		changed = false
		for _, nb := range g.neighbours(ep.id, l) {
			if d := g.dist(q, qn2, nb); d < ep.d {
				ep, changed = item{d, nb}, true
			}
		}
	}
	return ep
}

// searchLayer is the beam search of level l from eps, keeping the ef
// nearest nodes that allow accepts (all when nil; tombstones never when
// live is set). Tombstones and rejected nodes still route the search. The
// result, nearest first, lives in s.sel until the next call.
func (g *Graph) searchLayer(s *scratch, q []float32, qn2 float32, eps []item, ef, l int, allow func(uint32) bool, live bool) []item {
	s.gen++
	if s.gen == 0 {
		clear(s.visited)
		s.gen = 1
	}
	s.cand, s.res = s.cand[:0], s.res[:0]
	ok := func(id uint32) bool {
		return (!live || !bit(g.deleted, id)) && (allow == nil || allow(id))
	}
	for _, ep := range eps {
		if !s.visit(ep.id) {
			continue
		}
		s.cand.push(ep)
		if ok(ep.id) {
			s.res.push(ep)
		}
	}
	for len(s.res) > ef {
		s.res.pop()
	}
	for len(s.cand) > 0 {
		c := s.cand.pop()
		if len(s.res) >= ef && c.d > s.res[0].d {
			break
		}
		for _, nb := range g.neighbours(c.id, l) {
			if !s.visit(nb) {
				continue
			}
			if s.budget > 0 {
				if s.budget--; s.budget == 0 {
					s.exhausted = true
					s.sel = s.res.sorted(s.sel)
					return s.sel
				}
			}
			d := g.dist(q, qn2, nb)
			if len(s.res) < ef || d < s.res[0].d {
				s.cand.push(item{d, nb})
				if ok(nb) {
					s.res.push(item{d, nb})
					if len(s.res) > ef {
						s.res.pop()
					}
				}
			}
		}
	}
	s.sel = s.res.sorted(s.sel)
	return s.sel
}

// selectHeuristic keeps at most m of the candidates w (nearest first): a
// candidate is kept when it is nearer to the base than to every one kept
// before it (hnswlib's getNeighborsByHeuristic2). The result is a new
// slice.
func (g *Graph) selectHeuristic(s *scratch, w []item, m int) []item {
	out := make([]item, 0, min(m, len(w)))
	if len(w) <= m {
		return append(out, w...)
	}
	v := s.v
	if len(v) < g.cfg.Dim {
		v = make([]float32, g.cfg.Dim)
		s.v = v
	}
	for _, c := range w {
		if len(out) >= m {
			break
		}
		cv := g.view(c.id, v)
		cn2 := dot(cv, cv)
		good := true
		for _, o := range out {
			if g.dist(cv, cn2, o.id) < c.d {
				good = false
				break
			}
		}
		if good {
			out = append(out, c)
		}
	}
	return out
}

// addLink adds the link from to to at level l (d is their distance); when
// from's list is full, it is shrunk by the heuristic over its links and the
// new one.
func (g *Graph) addLink(s *scratch, from, to uint32, d float32, l, mmax int) {
	b := g.links(from, l)
	n := int(b[0])
	for _, x := range b[1 : 1+n] {
		if x == to {
			return
		}
	}
	g.markDirty(from)
	if len(s.w) < g.cfg.Dim {
		s.w = make([]float32, g.cfg.Dim)
	}
	if n < mmax {
		b[1+n] = to
		b[0]++
		return
	}
	fv := g.view(from, s.w)
	fn2 := dot(fv, fv)
	cands := make([]item, 0, n+1)
	cands = append(cands, item{d, to})
	for _, x := range b[1 : 1+n] {
		cands = append(cands, item{g.dist(fv, fn2, x), x})
	}
	sortItems(cands)
	sel := g.selectHeuristic(s, cands, mmax)
	b[0] = 0
	for _, it := range sel {
		b[1+b[0]] = it.id
		b[0]++
	}
}

// sortItems sorts by distance, nearest first (insertion sort: lists are
// short).
func sortItems(a []item) {
	for i := 1; i < len(a); i++ {
		x := a[i]
		j := i - 1
		for ; j >= 0 && a[j].d > x.d; j-- {
			a[j+1] = a[j]
		}
		a[j+1] = x
	}
}

// pickEntry makes the highest-level live node other than not the entry point.
func (g *Graph) pickEntry(not uint32) {
	g.top = -1
	for id := uint32(0); id < g.n; id++ {
		if id == not || g.levels[id] < 0 || bit(g.deleted, id) {
			continue
		}
		if int(g.levels[id]) > g.top {
			g.entry, g.top = id, int(g.levels[id])
		}
	}
	if g.top < 0 { // only tombstones (or nothing) left: route through one
		for id := uint32(0); id < g.n; id++ {
			if id != not && g.levels[id] >= 0 && int(g.levels[id]) > g.top {
				g.entry, g.top = id, int(g.levels[id])
			}
		}
	}
}

package hnsw

import "sync/atomic"

// Insert adds v as node id, or replaces the node id holds (its vector,
// links and tombstone; it keeps its level): the caller assigns ids, densely
// from 0 for the best memory use. It fails with ErrDim or ErrVector for a
// bad vector, and for an id staged by a batch not yet published. It is
// InsertBatch of one vector on the calling goroutine. Cost:
// O(EfConstruction · M · log n) distance computations.
func (g *Graph) Insert(id uint32, v []float32) error {
	return g.InsertBatch([]uint32{id}, [][]float32{v}, 1)
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
// as in hnswlib's replacement of deleted elements). The caller holds the
// write lock.
func (g *Graph) unlink(id uint32) {
	if bit(g.deleted, id) {
		clearBit(g.deleted, id)
		g.tombs--
	} else {
		g.live--
	}
	if e, _ := g.entryPoint(); e == id {
		g.pickEntry(id)
	}
}

// greedy walks level l from ep to the nearest node it can reach.
func (g *Graph) greedy(q []float32, qn2 float32, ep item, l int) item {
	for changed := true; changed; {
		changed = false
		b := g.links(ep.id, l)
		for i, n := 0, linkCount(b); i < n; i++ {
			nb := linkAt(b, i)
			if d := g.dist(q, qn2, nb); d < ep.d {
				ep, changed = item{d, nb}, true
			}
		}
	}
	return ep
}

// searchLayer is the beam search of level l from eps, keeping the ef
// nearest nodes that allow accepts (all when nil), never tombstones; for a
// query never staged nodes, for an insert never nodes a batch takes over
// or deletes. Every node still routes the search. The result, nearest first, lives
// in s.sel until the next call.
func (g *Graph) searchLayer(s *scratch, q []float32, qn2 float32, eps []item, ef, l int, allow func(uint32) bool, query bool) []item {
	s.gen++
	if s.gen == 0 {
		clear(s.visited)
		s.gen = 1
	}
	s.cand = s.cand[:0]
	s.res.reset()
	ok := func(id uint32) bool {
		if bit(g.deleted, id) {
			return false
		}
		if query {
			return !bit(g.pending, id) && (allow == nil || allow(id))
		}
		return !bit(g.leaving, id)
	}
	for _, ep := range eps {
		if !s.visit(ep.id) {
			continue
		}
		s.cand.push(key(ep))
		if ok(ep.id) {
			s.res.offer(ep, ef)
		}
	}
	for len(s.cand) > 0 {
		c := unkey(s.cand.pop())
		if s.res.len() >= ef && c.d > s.res.far().d {
			break
		}
		b := g.links(c.id, l)
		for i, n := 0, linkCount(b); i < n; i++ {
			nb := linkAt(b, i)
			if !s.visit(nb) {
				continue
			}
			if s.budget > 0 {
				if s.budget--; s.budget == 0 {
					s.exhausted = true
					s.sel = s.res.drain(s.sel)
					return s.sel
				}
			}
			d := g.dist(q, qn2, nb)
			if s.res.len() < ef || d < s.res.far().d {
				s.cand.push(key(item{d, nb}))
				if ok(nb) {
					s.res.offer(item{d, nb}, ef)
				}
			}
		}
	}
	s.sel = s.res.drain(s.sel)
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
// new one. It takes from's link lock.
func (g *Graph) addLink(s *scratch, from, to uint32, d float32, l, mmax int) {
	mu := g.lockLinks(from)
	defer mu.Unlock()
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
		atomic.StoreUint32(&b[1+n], to)
		atomic.StoreUint32(&b[0], uint32(n+1))
		return
	}
	fv := g.view(from, s.w)
	fn2 := dot(fv, fv)
	cands := s.cands[:0]
	cands = append(cands, item{d, to})
	for _, x := range b[1 : 1+n] {
		cands = append(cands, item{g.dist(fv, fn2, x), x})
	}
	s.cands = cands
	Sort[item, nearFirst](cands)
	sel := g.selectHeuristic(s, cands, mmax)
	ids := s.ids[:0]
	for _, it := range sel {
		ids = append(ids, it.id)
	}
	s.ids = ids
	storeLinks(b, ids)
}

// pickEntry makes the highest-level live node other than not the entry
// point (staged nodes count: they are being linked). The caller holds the
// write lock.
func (g *Graph) pickEntry(not uint32) {
	entry, top := uint32(0), -1
	for id := uint32(0); id < g.n; id++ {
		if id == not || g.levels[id] < 0 || bit(g.deleted, id) {
			continue
		}
		if int(g.levels[id]) > top {
			entry, top = id, int(g.levels[id])
		}
	}
	if top < 0 { // only tombstones (or nothing) left: route through one
		for id := uint32(0); id < g.n; id++ {
			if id != not && g.levels[id] >= 0 && int(g.levels[id]) > top {
				entry, top = id, int(g.levels[id])
			}
		}
	}
	g.setEntry(entry, top)
}

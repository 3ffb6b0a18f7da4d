package hnsw

// Delete makes id a tombstone: it is never returned again but keeps routing
// searches until RepairDeleted rewires around it. It reports whether id
// held a live node (a node staged and not yet published is not one: it is
// left alone). Cost: O(1), or O(n) when id is the entry point.
func (g *Graph) Delete(id uint32) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.deleteLocked(id)
}

func (g *Graph) deleteLocked(id uint32) bool {
	if !g.returnable(id) {
		return false
	}
	setBit(&g.deleted, id)
	g.live--
	g.tombs++
	if e, _ := g.entryPoint(); e == id {
		g.pickEntry(id)
		if _, top := g.entryPoint(); top < 0 {
			g.setEntry(id, int(g.levels[id]))
		}
	}
	return true
}

// RepairDeleted removes every tombstone from the graph: each live node that
// links to one gets, in its place, the best of its other links and the
// tombstone's live links (by the heuristic), and the tombstones' slots are
// emptied, ready for a later Insert of the same ids. It returns the ids
// freed. Cost: one pass over every link, plus a heuristic selection per
// affected list; it holds the write lock throughout.
func (g *Graph) RepairDeleted() []uint32 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.tombs == 0 {
		return nil
	}
	s := g.getScratchFor(g.n)
	defer g.putScratch(s)
	v := make([]float32, g.cfg.Dim)
	for id := uint32(0); id < g.n; id++ {
		if g.levels[id] < 0 || bit(g.deleted, id) {
			continue
		}
		for l := 0; l <= int(g.levels[id]); l++ {
			nbs := g.neighbours(id, l)
			hit := false
			for _, nb := range nbs {
				if bit(g.deleted, nb) {
					hit = true
					break
				}
			}
			if !hit {
				continue
			}
			g.relink(s, id, l, v)
		}
	}
	var freed []uint32
	for id := uint32(0); id < g.n; id++ {
		if g.levels[id] >= 0 && bit(g.deleted, id) {
			freed = append(freed, id)
		}
	}
	for _, id := range freed {
		for l := 0; l <= int(g.levels[id]); l++ {
			g.links(id, l)[0] = 0
		}
		g.setLevel(id, 0)
		g.levels[id] = levelEmpty
		clearBit(g.deleted, id)
		g.tombs--
		g.markDirty(id)
	}
	if entry, top := g.entryPoint(); g.live+g.staged == 0 {
		g.setEntry(0, -1)
	} else if top < 0 || g.levels[entry] < 0 {
		g.pickEntry(^uint32(0))
	}
	return freed
}

// relink rebuilds id's links at level l without tombstones.
func (g *Graph) relink(s *scratch, id uint32, l int, v []float32) {
	mmax := g.m
	if l == 0 {
		mmax = g.m0
	}
	fv := g.view(id, v)
	fn2 := dot(fv, fv)
	s.gen++
	if s.gen == 0 {
		clear(s.visited)
		s.gen = 1
	}
	s.visit(id)
	var cands []item
	add := func(x uint32) {
		if bit(g.deleted, x) || int(g.levels[x]) < l || !s.visit(x) {
			return
		}
		cands = append(cands, item{g.dist(fv, fn2, x), x})
	}
	for _, nb := range g.neighbours(id, l) {
		if !bit(g.deleted, nb) {
			add(nb)
			continue
		}
		for _, nn := range g.neighbours(nb, l) {
			add(nn)
		}
	}
	sortItems(cands)
	sel := g.selectHeuristic(s, cands, mmax)
	b := g.links(id, l)
	b[0] = 0
	for _, it := range sel {
		b[1+b[0]] = it.id
		b[0]++
	}
	g.markDirty(id)
}

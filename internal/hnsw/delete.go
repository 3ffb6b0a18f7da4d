package hnsw

import "time"

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
	g.gen.Add(1)
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
// affected list; it holds the write lock throughout (RepairStep does the
// same work in slices).
func (g *Graph) RepairDeleted() []uint32 {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.rep = nil
	for {
		freed, done := g.repairLocked(time.Time{})
		if done {
			return freed
		}
	}
}

// repair is the state of a repair done in slices (RepairStep).
type repair struct {
	gen    uint64   // g.gen when the repair began
	tombs  []uint32 // the tombstones it removes
	cursor uint32   // the next node whose links it looks at
	level  int      // and the next level of that node
}

// RepairStep does part of what RepairDeleted does, holding the write lock
// for about budget (at least one link list's worth of work), so that
// searches wait for no more than that: it rewires the link lists that
// name a tombstone, from where the previous step stopped, and when it has
// been through every node it frees the tombstones, returns their ids and
// reports done. Between steps searches see a graph where some lists are
// rewired and the tombstones still route. A change to the graph between
// steps (an insert, a link, a delete, a load) makes the next step begin
// again from the first node, so a caller that wants the repair to end
// makes no change while it runs. It reports done with no ids when there
// is no tombstone. A budget of 0 or less does it all in one step.
func (g *Graph) RepairStep(budget time.Duration) (freed []uint32, done bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var deadline time.Time
	if budget > 0 {
		deadline = time.Now().Add(budget)
	}
	return g.repairLocked(deadline)
}

// RepairPending reports whether a repair done in slices has begun and
// not ended.
func (g *Graph) RepairPending() bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.rep != nil
}

// repairLocked runs a repair until deadline (zero: to the end).
func (g *Graph) repairLocked(deadline time.Time) ([]uint32, bool) {
	if g.rep != nil && g.rep.gen != g.gen.Load() {
		g.rep = nil // the graph changed under it: begin again
	}
	if g.rep == nil {
		if g.tombs == 0 {
			return nil, true
		}
		r := &repair{gen: g.gen.Load()}
		for id := uint32(0); id < g.n; id++ {
			if g.levels[id] >= 0 && bit(g.deleted, id) {
				r.tombs = append(r.tombs, id)
			}
		}
		g.rep = r
	}
	r := g.rep
	s := g.getScratchFor(g.n)
	defer g.putScratch(s)
	v := make([]float32, g.cfg.Dim)
	for scanned := 0; r.cursor < g.n; scanned++ {
		if !deadline.IsZero() && scanned&255 == 255 && time.Now().After(deadline) {
			return nil, false
		}
		id := r.cursor
		if g.levels[id] < 0 || bit(g.deleted, id) {
			r.cursor, r.level = id+1, 0
			continue
		}
		for ; r.level <= int(g.levels[id]); r.level++ {
			hit := false
			for _, nb := range g.neighbours(id, r.level) {
				if bit(g.deleted, nb) {
					hit = true
					break
				}
			}
			if !hit {
				continue
			}
			g.relink(s, id, r.level, v)
			if !deadline.IsZero() && time.Now().After(deadline) {
				r.level++
				return nil, false
			}
		}
		r.cursor, r.level = id+1, 0
	}
	g.rep = nil
	freed := r.tombs
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
	g.gen.Add(1)
	return freed, true
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
	Sort[item, nearFirst](cands)
	sel := g.selectHeuristic(s, cands, mmax)
	b := g.links(id, l)
	b[0] = 0
	for _, it := range sel {
		b[1+b[0]] = it.id
		b[0]++
	}
	g.markDirty(id)
}

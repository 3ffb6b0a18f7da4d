package hnsw

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Batch is a set of nodes Stage stored: their slots are taken and their
// vectors in place, but they are not linked (Link) nor returned by
// searches (Publish) yet. A Batch belongs to one goroutine.
type Batch struct {
	g       *Graph
	ids     []uint32
	vecs    [][]float32 // prepared (normalised for cosine), float32
	levels  []int
	first   int      // the node Stage made the entry point of an empty graph (nothing to link), or -1
	over    []int    // the nodes taken over (slots that held a node), in order
	gone    []uint32 // live nodes Publish deletes
	linked  bool
	publish bool
}

// Len returns the number of nodes of the batch.
func (b *Batch) Len() int { return len(b.ids) }

// Stage checks every vector and stores vs[i] as node ids[i], or, for an id
// that holds a node, takes it over (its tombstone is cleared, it keeps its
// level, and Link gives it the new vector). Staged nodes route searches
// but are not returned until Publish. The live nodes of gone (others are
// skipped) are deleted by Publish, at once with it: searches return them
// until then, but the batch's nodes are not linked to them. It fails,
// staging nothing, with ErrDim or ErrVector for a bad vector, and for an
// id given twice, an id out of range, or an id already staged by a batch
// not yet published. Cost: a copy of each vector under the write lock.
func (g *Graph) Stage(ids []uint32, vs [][]float32, gone []uint32) (*Batch, error) {
	if len(ids) != len(vs) {
		return nil, fmt.Errorf("hnsw: %d ids for %d vectors", len(ids), len(vs))
	}
	b := &Batch{g: g, ids: ids, vecs: make([][]float32, len(vs)), levels: make([]int, len(ids)), first: -1}
	var maxID uint32
	seen := make(map[uint32]struct{}, len(ids))
	for i, v := range vs {
		q, err := g.prepare(v, nil)
		if err != nil {
			return nil, err
		}
		b.vecs[i] = q
		id := ids[i]
		if id == ^uint32(0) {
			return nil, fmt.Errorf("hnsw: id %d out of range", id)
		}
		if _, dup := seen[id]; dup {
			return nil, fmt.Errorf("hnsw: id %d twice in a batch", id)
		}
		seen[id] = struct{}{}
		maxID = max(maxID, id)
	}
	if len(ids) == 0 && len(gone) == 0 {
		b.linked, b.publish = true, true
		return b, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gen.Add(1)
	for _, id := range ids {
		if bit(g.pending, id) {
			return nil, fmt.Errorf("hnsw: id %d is staged by a batch not yet published", id)
		}
	}
	if len(ids) > 0 {
		g.grow(maxID + 1)
	}
	for _, id := range gone {
		if _, taken := seen[id]; !taken && g.returnable(id) {
			b.gone = append(b.gone, id)
			g.leaving[id>>6] |= 1 << (id & 63)
		}
	}
	for i, id := range ids {
		level := g.randomLevel()
		if old := int(g.levels[id]); old >= 0 {
			// A node taken over keeps its level, so links of others to it,
			// at any level up to it, stay valid; it keeps its vector and
			// links until Link swaps and links it (one at a time: a graph
			// where many nodes moved and kept their old links routes
			// badly).
			g.unlink(id)
			b.levels[i] = old
			b.over = append(b.over, i)
			g.pending[id>>6] |= 1 << (id & 63)
			g.leaving[id>>6] |= 1 << (id & 63) // its vector and links are the old ones
			g.staged++
			continue
		}
		g.setLevel(id, level)
		for l := 0; l <= level; l++ {
			g.links(id, l)[0] = 0
		}
		g.store(id, b.vecs[i])
		b.levels[i] = level
		g.pending[id>>6] |= 1 << (id & 63)
		g.staged++
		g.markDirty(id)
		if _, top := g.entryPoint(); top < 0 || g.live-len(b.gone)+g.staged == 1 {
			// The first node of an empty graph (tombstones and the nodes
			// the batch deletes, if any, are left behind: nothing live is
			// reachable only through them).
			g.setEntry(id, level)
			b.first = i
		}
	}
	return b, nil
}

// Link links the staged nodes into the graph: first the nodes taken over,
// one at a time, each given its new vector just before; then the new nodes
// on up to workers goroutines (0: GOMAXPROCS). It runs beside searches and
// other batches: each node is linked under the read lock, its lists and
// its neighbours' under their link locks. A second call does nothing. Cost: O(EfConstruction · M · log n)
// distance computations a node.
func (b *Batch) Link(workers int) {
	if b.linked {
		return
	}
	b.linked = true
	for _, i := range b.over {
		b.g.swap(b.ids[i], b.vecs[i])
		s := b.g.getScratch()
		b.g.link(s, b.ids[i], b.vecs[i], b.levels[i])
		b.g.putScratch(s)
		b.vecs[i] = nil
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// A goroutine is worth its start for a few nodes at least.
	workers = max(1, min(workers, len(b.ids)/4))
	var next atomic.Int64
	work := func() {
		s, _ := b.g.pool.Get().(*scratch) // sized by link, under the read lock
		if s == nil {
			s = &scratch{}
		}
		defer b.g.putScratch(s)
		for {
			i := int(next.Add(1) - 1)
			if i >= len(b.ids) {
				return
			}
			if i != b.first && b.vecs[i] != nil {
				b.g.link(s, b.ids[i], b.vecs[i], b.levels[i])
			}
			b.vecs[i] = nil
		}
	}
	if workers == 1 {
		work()
		return
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	wg.Wait()
}

// Publish makes the batch's nodes returnable by searches and deletes its
// gone nodes, all at once (Link first if it was not called). A second call
// does nothing.
func (b *Batch) Publish() {
	b.Link(1)
	if b.publish {
		return
	}
	b.publish = true
	g := b.g
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gen.Add(1)
	for _, id := range b.ids {
		clearBit(g.pending, id)
	}
	g.staged -= len(b.ids)
	g.live += len(b.ids)
	for _, id := range b.gone {
		clearBit(g.leaving, id)
		g.deleteLocked(id)
	}
}

// swap puts the new vector of a node taken over in place.
func (g *Graph) swap(id uint32, q []float32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gen.Add(1)
	g.store(id, q)
	clearBit(g.leaving, id)
	for l := 0; l <= int(g.levels[id]); l++ {
		g.links(id, l)[0] = 0 // its own linking, next, gives it links for its new place
	}
	if e, _ := g.entryPoint(); e == id {
		// Its linking searches from another node (and makes it the entry
		// again if it is above them all).
		g.pickEntry(id)
		if _, top := g.entryPoint(); top < 0 {
			g.setEntry(id, int(g.levels[id]))
		}
	}
}

// InsertBatch adds vs[i] as node ids[i] (Insert for each, as one batch):
// Stage, Link on up to workers goroutines (0: GOMAXPROCS), Publish. It
// fails, inserting nothing, as Stage does.
func (g *Graph) InsertBatch(ids []uint32, vs [][]float32, workers int) error {
	b, err := g.Stage(ids, vs, nil)
	if err != nil {
		return err
	}
	b.Link(workers)
	b.Publish()
	return nil
}

// link links the staged node id (vector q, prepared) at levels 0..level:
// a greedy walk down to its level, then at each level the EfConstruction
// nearest, of which the heuristic keeps M (2M at level 0), and the links
// back to it. It holds the read lock; a node going above the top level
// holds topMu throughout, as hnswlib holds its global lock.
func (g *Graph) link(s *scratch, id uint32, q []float32, level int) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	g.gen.Add(1)
	if len(s.visited) < int(g.n) {
		s.visited = make([]uint32, int(g.n)+chunkSize)
		s.gen = 1
	}
	entry, top := g.entryPoint()
	if level > top {
		g.topMu.Lock()
		if entry, top = g.entryPoint(); level > top {
			defer func() {
				if _, t := g.entryPoint(); level > t {
					g.setEntry(id, level)
				}
				g.topMu.Unlock()
			}()
		} else {
			g.topMu.Unlock()
		}
	}
	if top < 0 || entry == id {
		return
	}
	qn2 := dot(q, q)
	ep := item{g.dist(q, qn2, entry), entry}
	for l := top; l > level; l-- {
		ep = g.greedy(q, qn2, ep, l)
	}
	eps := append(s.tmp[:0], ep)
	for l := min(level, top); l >= 0; l-- {
		w := g.searchLayer(s, q, qn2, eps, g.cfg.EfConstruction, l, nil, false)
		// A node taken over, or linked to by a batch beside this one, can
		// be met: never link it to itself.
		kept := w[:0]
		for _, it := range w {
			if it.id != id {
				kept = append(kept, it)
			}
		}
		w = kept
		mmax := g.m
		if l == 0 {
			mmax = g.m0
		}
		sel := g.selectHeuristic(s, w, g.m)
		g.setOwnLinks(s, id, q, qn2, l, mmax, sel)
		for _, it := range sel {
			g.addLink(s, it.id, id, it.d, l, mmax)
		}
		if len(w) > 0 {
			// Every node the search met at this level may be excluded
			// (taken over, deleted): the walk then goes on down from
			// where it stood, as a greedy walk would.
			eps = append(eps[:0], w...)
		}
	}
	s.tmp = eps
}

// setOwnLinks gives the node id being linked its links sel at level l,
// keeping the links concurrent inserts gave it meanwhile (a node met at a
// level above while it is being linked can be chosen below before its own
// list is set): the best mmax of both, by the heuristic.
func (g *Graph) setOwnLinks(s *scratch, id uint32, q []float32, qn2 float32, l, mmax int, sel []item) {
	mu := g.lockLinks(id)
	defer mu.Unlock()
	b := g.links(id, l)
	if n := int(b[0]); n > 0 {
		cands := append(s.cands[:0], sel...)
		for _, x := range b[1 : 1+n] {
			dup := false
			for _, it := range sel {
				dup = dup || it.id == x
			}
			if !dup {
				cands = append(cands, item{g.dist(q, qn2, x), x})
			}
		}
		s.cands = cands
		Sort[item, nearFirst](cands)
		if len(cands) > mmax {
			cands = g.selectHeuristic(s, cands, mmax)
		}
		sel = cands
	}
	ids := s.ids[:0]
	for _, it := range sel {
		ids = append(ids, it.id)
	}
	s.ids = ids
	storeLinks(b, ids)
	g.markDirty(id)
}

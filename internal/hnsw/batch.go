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
	first   int // the node Stage made the entry point of an empty graph (nothing to link), or -1
	linked  bool
	publish bool
}

// Len returns the number of nodes of the batch.
func (b *Batch) Len() int { return len(b.ids) }

// Stage checks every vector and stores vs[i] as node ids[i], taking over
// the node an id holds (its vector is replaced and its tombstone cleared;
// it keeps its level). Staged nodes route searches but are not returned
// until Publish. It fails, staging nothing, with ErrDim or ErrVector for a
// bad vector, and for an id given twice, an id out of range, or an id
// already staged by a batch not yet published. Cost: a copy of each vector
// under the write lock.
func (g *Graph) Stage(ids []uint32, vs [][]float32) (*Batch, error) {
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
	if len(ids) == 0 {
		b.linked, b.publish = true, true
		return b, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, id := range ids {
		if bit(g.pending, id) {
			return nil, fmt.Errorf("hnsw: id %d is staged by a batch not yet published", id)
		}
	}
	g.grow(maxID + 1)
	for i, id := range ids {
		level := g.randomLevel()
		if old := int(g.levels[id]); old >= 0 {
			// A node taken over keeps its level: links of others to it, at
			// any level up to it, stay valid.
			g.unlink(id)
			level = old
		}
		g.setLevel(id, level)
		g.store(id, b.vecs[i])
		for l := 0; l <= level; l++ {
			g.links(id, l)[0] = 0
		}
		b.levels[i] = level
		g.pending[id>>6] |= 1 << (id & 63)
		g.staged++
		g.markDirty(id)
		if _, top := g.entryPoint(); top < 0 || g.live+g.staged == 1 {
			// The first node of an empty graph (tombstones, if any, are
			// left behind: nothing live is reachable only through them).
			g.setEntry(id, level)
			b.first = i
		}
	}
	return b, nil
}

// Link links the staged nodes into the graph on up to workers goroutines
// (0: GOMAXPROCS), beside searches and other batches: each node is linked
// under the read lock, its lists and its neighbours' under their link
// locks. A second call does nothing. Cost: O(EfConstruction · M · log n)
// distance computations a node.
func (b *Batch) Link(workers int) {
	if b.linked {
		return
	}
	b.linked = true
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
			if i != b.first {
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

// Publish makes the batch's nodes returnable by searches, all at once
// (Link first if it was not called). A second call does nothing.
func (b *Batch) Publish() {
	b.Link(1)
	if b.publish {
		return
	}
	b.publish = true
	g := b.g
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, id := range b.ids {
		clearBit(g.pending, id)
	}
	g.staged -= len(b.ids)
	g.live += len(b.ids)
}

// InsertBatch adds vs[i] as node ids[i] (Insert for each, as one batch):
// Stage, Link on up to workers goroutines (0: GOMAXPROCS), Publish. It
// fails, inserting nothing, as Stage does.
func (g *Graph) InsertBatch(ids []uint32, vs [][]float32, workers int) error {
	b, err := g.Stage(ids, vs)
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
		ids := s.ids[:0]
		for _, it := range sel {
			ids = append(ids, it.id)
		}
		s.ids = ids
		mu := g.lockLinks(id)
		storeLinks(g.links(id, l), ids)
		mu.Unlock()
		g.markDirty(id)
		for _, it := range sel {
			g.addLink(s, it.id, id, it.d, l, mmax)
		}
		eps = append(eps[:0], w...)
	}
	s.tmp = eps
}

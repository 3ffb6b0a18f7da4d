package hnsw

import (
	"fmt"
	"math/bits"
	"sync/atomic"
)

// Node is one node's place in the graph, as a caller persists it.
type Node struct {
	Level int        // highest level of the node
	Links [][]uint32 // Links[l]: its neighbours at level l, 0..Level
}

// Node returns id's links, or false if id holds no node, a tombstone or a
// node staged and not yet published. Safe beside linking: the lists are
// read under id's link lock.
func (g *Graph) Node(id uint32) (Node, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if !g.returnable(id) {
		return Node{}, false
	}
	n := Node{Level: int(g.levels[id]), Links: make([][]uint32, int(g.levels[id])+1)}
	mu := g.lockLinks(id)
	defer mu.Unlock()
	for l := range n.Links {
		b := g.links(id, l)
		n.Links[l] = append([]uint32(nil), b[1:1+b[0]]...)
	}
	return n, true
}

// Load puts node id with vector v and the links of n into the graph without
// a search, for a caller that persisted the graph. Links to ids that hold
// no node when a search meets them are skipped; call Prune once every node
// is loaded to drop them. It fails with ErrDim or ErrVector for a bad
// vector, or for a level or a list out of range.
func (g *Graph) Load(id uint32, v []float32, n Node) error {
	if n.Level < 0 || n.Level > maxLevel || len(n.Links) != n.Level+1 {
		return fmt.Errorf("hnsw: node %d: level %d with %d link lists", id, n.Level, len(n.Links))
	}
	for l, ls := range n.Links {
		if (l == 0 && len(ls) > g.m0) || (l > 0 && len(ls) > g.m) {
			return fmt.Errorf("hnsw: node %d: %d links at level %d", id, len(ls), l)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	q, err := g.prepare(v, nil)
	if err != nil {
		return err
	}
	g.grow(id + 1)
	if bit(g.pending, id) {
		return fmt.Errorf("hnsw: id %d is staged by a batch not yet published", id)
	}
	if g.levels[id] >= 0 {
		g.unlink(id)
	}
	g.setLevel(id, n.Level)
	g.store(id, q)
	for l, ls := range n.Links {
		b := g.links(id, l)
		b[0] = uint32(copy(b[1:], ls))
	}
	g.live++
	if _, top := g.entryPoint(); n.Level > top {
		g.setEntry(id, n.Level)
	}
	return nil
}

// Prune drops every link to an id that holds no node (or to a node whose
// level is below the link's), as loading a partly persisted graph leaves.
// It returns how many links it dropped. Cost: one pass over every link.
func (g *Graph) Prune() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	dropped := 0
	for id := uint32(0); id < g.n; id++ {
		for l := 0; l <= int(g.levels[id]); l++ {
			b := g.links(id, l)
			n := 0
			for _, x := range b[1 : 1+b[0]] {
				if x < g.n && int(g.levels[x]) >= l && x != id {
					b[1+n] = x
					n++
				}
			}
			if uint32(n) != b[0] {
				dropped += int(b[0]) - n
				b[0] = uint32(n)
				g.markDirty(id)
			}
		}
	}
	return dropped
}

// TakeDirty returns up to max ids whose links changed since they were last
// taken (every id of an Insert, of the lists it changed, of RepairDeleted's
// work), smallest first, and forgets them; nodes staged and not yet
// published stay for a later call. Dirty returns how many there are. Both
// are safe beside linking.
func (g *Graph) TakeDirty(max int) []uint32 {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []uint32
	for w := range g.dirty {
		word := atomic.LoadUint64(&g.dirty[w])
		if len(g.pending) > w {
			word &^= g.pending[w]
		}
		var took uint64
		for word != 0 && len(out) < max {
			b := uint32(bits.TrailingZeros64(word))
			out = append(out, uint32(w)<<6|b)
			word &^= 1 << b
			took |= 1 << b
		}
		if took != 0 {
			atomic.AndUint64(&g.dirty[w], ^took)
		}
		if len(out) >= max {
			break
		}
	}
	g.ndirty.Add(-int64(len(out)))
	return out
}

// Dirty returns how many ids TakeDirty has to give (staged nodes
// included).
func (g *Graph) Dirty() int { return int(g.ndirty.Load()) }

// MarkDirty makes TakeDirty give id again (a caller whose write of it
// failed).
func (g *Graph) MarkDirty(id uint32) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if id < g.n {
		g.markDirty(id)
	}
}

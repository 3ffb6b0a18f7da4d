package hnsw

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// littleEndian: float32 values in memory have the bytes of their
// little-endian form, so persisted vectors are copied in as bytes.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

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

// Loading a persisted graph: LoadVector puts every vector in its slot,
// LoadNode gives the slots whose links were saved those links, and
// LinkLoaded links the others as an insert would; Prune then drops the
// links to slots that hold no node. Links to ids that hold no node when a
// search meets them are skipped until then. The three may run on
// different goroutines only one at a time (each takes the write lock).

// LoadVector puts vector raw (Dim float32 values, little endian: the form
// the caller persisted) in slot id without making it a node. It fails with
// ErrDim for a short raw, ErrVector for a vector holding NaN or ±Inf or a
// zero vector under cosine, and for a slot that holds a node. Cost: one
// pass over the vector to decode it and one to normalise it (cosine), with
// no copy beside the graph's own.
func (g *Graph) LoadVector(id uint32, raw []byte) error {
	d := g.cfg.Dim
	if len(raw) < 4*d {
		return fmt.Errorf("%w: %d bytes, want %d", ErrDim, len(raw), 4*d)
	}
	if id == ^uint32(0) {
		return fmt.Errorf("hnsw: id %d out of range", id)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gen.Add(1)
	g.grow(id + 1)
	if g.levels[id] >= 0 || bit(g.pending, id) {
		return fmt.Errorf("hnsw: slot %d holds a node", id)
	}
	var dst []float32
	if g.cfg.Storage == F32 {
		o := int(id&chunkMask) * d
		dst = g.vf32[id>>chunkShift][o : o+d : o+d]
	} else {
		s := g.getScratch()
		defer g.putScratch(s)
		if cap(s.w) < d {
			s.w = make([]float32, d)
		}
		dst = s.w[:d]
	}
	if littleEndian {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), 4*d), raw)
	} else {
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	}
	n2 := dot(dst, dst)
	if math.IsNaN(float64(n2)) || math.IsInf(float64(n2), 0) || (n2 == 0 && g.cfg.Metric == Cosine) {
		// Check element by element (a square can overflow float32 alone).
		q, err := g.prepare(dst, nil)
		if err != nil {
			clear(dst)
			return err
		}
		copy(dst, q)
	} else if g.cfg.Metric == Cosine {
		inv := float32(1 / math.Sqrt(float64(n2)))
		for i := range dst {
			dst[i] *= inv
		}
	}
	if g.cfg.Storage != F32 {
		g.store(id, dst)
	}
	return nil
}

// LoadNode makes slot id, whose vector LoadVector put, a node with the
// level and links of n. It fails for a level or a list out of range, and
// for a slot that LoadVector did not fill or that holds a node.
func (g *Graph) LoadNode(id uint32, n Node) error {
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
	g.gen.Add(1)
	if id >= g.n || g.levels[id] >= 0 || bit(g.pending, id) {
		return fmt.Errorf("hnsw: slot %d has no loaded vector, or holds a node", id)
	}
	g.setLevel(id, n.Level)
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

// LinkLoaded links the slots ids, whose vectors LoadVector put, into the
// graph as InsertBatch does (on up to workers goroutines, 0: GOMAXPROCS),
// for the nodes whose links were not saved. Under F16 or I8 the vector
// linked is the one held in memory. It fails as Stage does, and for a slot
// that LoadVector did not fill.
func (g *Graph) LinkLoaded(ids []uint32, workers int) error {
	vs := make([][]float32, len(ids))
	g.mu.RLock()
	for i, id := range ids {
		if id >= g.n || g.levels[id] >= 0 {
			g.mu.RUnlock()
			return fmt.Errorf("hnsw: slot %d has no loaded vector, or holds a node", id)
		}
		vs[i] = g.decode(id, make([]float32, g.cfg.Dim))
	}
	g.mu.RUnlock()
	return g.InsertBatch(ids, vs, workers)
}

// Load puts node id with vector v and the links of n into the graph without
// a search (LoadVector of v, then LoadNode). It fails as they do.
func (g *Graph) Load(id uint32, v []float32, n Node) error {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	if len(v) != g.cfg.Dim {
		return fmt.Errorf("%w: %d, want %d", ErrDim, len(v), g.cfg.Dim)
	}
	if err := g.LoadVector(id, raw); err != nil {
		return err
	}
	return g.LoadNode(id, n)
}

// Prune drops every link to an id that holds no node (or to a node whose
// level is below the link's), as loading a partly persisted graph leaves.
// It returns how many links it dropped. Cost: one pass over every link.
func (g *Graph) Prune() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gen.Add(1)
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

package hnsw

import "math"

// Order is the order a Heap keeps: Before(a, b) reports whether a belongs
// nearer the root than b. Its types are empty structs, so a Heap costs no
// function value.
type Order[T any] interface {
	Before(a, b T) bool
}

// Heap is a binary heap of T: its root, Top, is an element that no other
// comes Before. The zero Heap is empty and ready.
type Heap[T any, O Order[T]] struct {
	s []T
}

// Len returns the number of elements.
func (h *Heap[T, O]) Len() int { return len(h.s) }

// Top returns the root; h is not empty.
func (h *Heap[T, O]) Top() T { return h.s[0] }

// Items returns the elements, in heap order (valid until h changes).
func (h *Heap[T, O]) Items() []T { return h.s }

// Reset empties h, keeping its storage.
func (h *Heap[T, O]) Reset() { h.s = h.s[:0] }

// Push adds x.
func (h *Heap[T, O]) Push(x T) {
	var o O
	h.s = append(h.s, x)
	s := h.s
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !o.Before(s[i], s[p]) {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

// Pop removes and returns the root; h is not empty.
func (h *Heap[T, O]) Pop() T {
	s := h.s
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	h.s = s[:n]
	h.down(0)
	return top
}

// Offer keeps the k elements that come last: it adds x when h has fewer
// than k, or replaces the root with x when the root comes Before x, and
// reports whether x was kept.
func (h *Heap[T, O]) Offer(x T, k int) bool {
	var o O
	if len(h.s) < k {
		h.Push(x)
		return true
	}
	if len(h.s) == 0 || !o.Before(h.s[0], x) {
		return false
	}
	h.s[0] = x
	h.down(0)
	return true
}

// Drain empties h into out (reusing its storage) in the reverse of the
// order it pops: with the farthest at the root, nearest first.
func (h *Heap[T, O]) Drain(out []T) []T {
	n := len(h.s)
	out = append(out[:0], make([]T, n)...)
	for i := n - 1; i >= 0; i-- {
		out[i] = h.Pop()
	}
	return out
}

// down restores the heap below i.
func (h *Heap[T, O]) down(i int) {
	var o O
	s := h.s
	n := len(s)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		if r := l + 1; r < n && o.Before(s[r], s[l]) {
			l = r
		}
		if !o.Before(s[l], s[i]) {
			return
		}
		s[i], s[l] = s[l], s[i]
		i = l
	}
}

// Sort sorts s so that no element comes Before one ahead of it, keeping
// the order of equal ones (an insertion sort: the lists are short).
func Sort[T any, O Order[T]](s []T) {
	var o O
	for i := 1; i < len(s); i++ {
		x := s[i]
		j := i - 1
		for ; j >= 0 && o.Before(x, s[j]); j-- {
			s[j+1] = s[j]
		}
		s[j+1] = x
	}
}

// item is a node and its distance to the query.
type item struct {
	d  float32
	id uint32
}

// nearer orders items by distance, then by id.
func nearer(a, b item) bool {
	return a.d < b.d || (a.d == b.d && a.id < b.id)
}

// nearFirst is the order of a candidate queue: the nearest at the root.
type nearFirst struct{}

// Before reports whether a is nearer than b.
func (nearFirst) Before(a, b item) bool { return nearer(a, b) }

// heap is the graph's own binary heap, of items packed by key, the
// nearest at the root; a list of the k nearest (farHeap) keeps the keys
// complemented, the farthest at the root. It is concrete, not a Heap, for
// the search's hot path: Go compiles a Heap once for every element type of
// the same shape and calls Order.Before through a dictionary, not inlined
// (in the CPU profile of BenchmarkSearch and BenchmarkExactScan a Heap of
// items took about 14 % of the time against 9 % for the concrete heaps
// before it), and a key is one integer comparison where an item is two of
// floats.
type heap []uint64

// key packs x into a uint64 that orders as nearer does: the distance's
// bits made to sort as an unsigned integer, then the id (-0 sorts before
// +0; a node's distance has one sign, so the order stays total).
func key(x item) uint64 {
	b := math.Float32bits(x.d)
	if b&(1<<31) != 0 {
		b = ^b
	} else {
		b |= 1 << 31
	}
	return uint64(b)<<32 | uint64(x.id)
}

// unkey is the item of key k.
func unkey(k uint64) item {
	b := uint32(k >> 32)
	if b&(1<<31) != 0 {
		b &^= 1 << 31
	} else {
		b = ^b
	}
	return item{math.Float32frombits(b), uint32(k)}
}

func (h *heap) push(k uint64) {
	*h = append(*h, k)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[i] >= s[p] {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *heap) pop() uint64 {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	*h = s
	s.down(0)
	return top
}

// down restores the heap below i.
func (h heap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		if r := l + 1; r < n && h[r] < h[l] {
			l = r
		}
		if h[l] >= h[i] {
			return
		}
		h[i], h[l] = h[l], h[i]
		i = l
	}
}

// farHeap keeps the k nearest items offered, the farthest at the root,
// where the next one nearer replaces it: a heap of complemented keys.
type farHeap struct{ h heap }

func (f *farHeap) len() int { return len(f.h) }

// far returns the farthest item kept; f is not empty.
func (f *farHeap) far() item { return unkey(^f.h[0]) }

// at returns the i-th item kept, in heap order.
func (f *farHeap) at(i int) item { return unkey(^f.h[i]) }

func (f *farHeap) reset() { f.h = f.h[:0] }

// wants reports whether offer would keep x.
func (f *farHeap) wants(x item, k int) bool {
	return len(f.h) < k || (len(f.h) > 0 && ^key(x) > f.h[0])
}

// offer keeps x when f has fewer than k, or in place of the farthest when x
// is nearer.
func (f *farHeap) offer(x item, k int) {
	kx := ^key(x)
	if len(f.h) < k {
		f.h.push(kx)
	} else if len(f.h) > 0 && kx > f.h[0] {
		f.h[0] = kx
		f.h.down(0)
	}
}

// drain empties f into out (reusing its storage), nearest first.
func (f *farHeap) drain(out []item) []item {
	n := len(f.h)
	out = append(out[:0], make([]item, n)...)
	for i := n - 1; i >= 0; i-- {
		out[i] = unkey(^f.h.pop())
	}
	return out
}

// scratch is the per-search state, pooled.
type scratch struct {
	visited []uint32 // generation stamps
	gen     uint32
	cand    heap
	res     farHeap
	tmp     []item
	sel     []item
	cands   []item
	ids     []uint32
	scan    []uint32 // the ids an exact scan keeps after its filter
	v       []float32
	w       []float32
	// budget, when positive, is how many more distances a searchLayer
	// may compute; exhausted tells it ran out.
	budget    int
	exhausted bool
}

func (g *Graph) getScratch() *scratch {
	s, _ := g.pool.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	if len(s.visited) < int(g.n) {
		s.visited = make([]uint32, int(g.n)+chunkSize)
		s.gen = 0
	}
	s.gen++
	if s.gen == 0 {
		clear(s.visited)
		s.gen = 1
	}
	return s
}

func (g *Graph) putScratch(s *scratch) { g.pool.Put(s) }

// visit marks id visited and reports whether it was not before.
func (s *scratch) visit(id uint32) bool {
	if s.visited[id] == s.gen {
		return false
	}
	s.visited[id] = s.gen
	return true
}

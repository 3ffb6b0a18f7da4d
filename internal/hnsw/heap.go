package hnsw

// item is a node and its distance to the query.
type item struct {
	d  float32
	id uint32
}

// minHeap pops the nearest item first.
type minHeap []item

func (h *minHeap) push(x item) {
	*h = append(*h, x)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].d <= s[i].d {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *minHeap) pop() item {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	*h = s[:n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		if r := l + 1; r < n && s[r].d < s[l].d {
			l = r
		}
		if s[i].d <= s[l].d {
			break
		}
		s[i], s[l] = s[l], s[i]
		i = l
	}
	return top
}

// maxHeap pops the farthest item first.
type maxHeap []item

func (h *maxHeap) push(x item) {
	*h = append(*h, x)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].d >= s[i].d {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *maxHeap) pop() item {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	*h = s[:n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		if r := l + 1; r < n && s[r].d > s[l].d {
			l = r
		}
		if s[i].d >= s[l].d {
			break
		}
		s[i], s[l] = s[l], s[i]
		i = l
	}
	return top
}

// sorted empties h and returns its items nearest first, in out.
func (h *maxHeap) sorted(out []item) []item {
	n := len(*h)
	out = append(out[:0], make([]item, n)...)
	for i := n - 1; i >= 0; i-- {
		out[i] = h.pop()
	}
	return out
}

// scratch is the per-search state, pooled.
type scratch struct {
	visited []uint32 // generation stamps
	gen     uint32
	cand    minHeap
	res     maxHeap
	tmp     []item
	sel     []item
	cands   []item
	ids     []uint32
	scan    []uint32 // the ids an exact scan keeps after its filter
	q       []float32
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

package hnsw

import (
	"runtime"
	"sync"
)

// scanPerWorker is the fewest ids an exact scan gives each goroutine: a
// list of at least twice as many is split across up to GOMAXPROCS
// goroutines, each with its own top k, merged at the end. Measured on two
// shared cores (BenchmarkFilteredScan, ids=n): splitting 500 to 4,000 ids
// of 384 dimensions cost 10 to 60 % more than one goroutine (their vectors
// were in the cache, and starting the second goroutine took tens of
// microseconds), while splitting 10,000 ids made a 10 % filter's search on
// 100,000 vectors 1.6 to 2.2 times faster in package vector (its first
// pass over the queries; 0.9 to 2.4 the second).
const scanPerWorker = 4000

// prefetchAhead is how many ids ahead an exact scan of a list of ids asks
// for a vector to be brought into the cache.
const prefetchAhead = 6

// exact scans ids (every slot when nil; an id listed twice counts once) for
// the k nearest live nodes that allow accepts, nearest first; equal
// distances are ordered by id, so the result depends neither on the order
// of ids nor on how the scan is split. allow is called from the calling
// goroutine only.
func (g *Graph) exact(s *scratch, q []float32, qn2 float32, k int, ids []uint32, allow func(uint32) bool) []item {
	return g.exactSplit(s, q, qn2, k, ids, allow, scanWorkers(len(ids)))
}

// scanWorkers is how many goroutines an exact scan of n ids uses.
func scanWorkers(n int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n/scanPerWorker))
}

// exactSplit is exact with the list of ids split across workers
// goroutines (the whole-graph scan, ids nil, is not split).
func (g *Graph) exactSplit(s *scratch, q []float32, qn2 float32, k int, ids []uint32, allow func(uint32) bool, workers int) []item {
	if ids == nil {
		h := farHeap{h: make(heap, 0, k+1)}
		for id := uint32(0); id < g.n; id++ {
			if g.returnable(id) && (allow == nil || allow(id)) {
				offer(&h, item{g.dist(q, qn2, id), id}, k, false)
			}
		}
		return h.drain(nil)
	}
	if allow != nil {
		kept := s.scan[:0]
		for _, id := range ids {
			if g.returnable(id) && allow(id) {
				kept = append(kept, id)
			}
		}
		s.scan = kept
		ids = kept
	}
	workers = max(1, min(workers, len(ids)))
	if workers == 1 {
		h := g.scanIDs(q, qn2, k, ids)
		return h.drain(nil)
	}
	parts := make([]farHeap, workers)
	per := (len(ids) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		lo, hi := min(w*per, len(ids)), min((w+1)*per, len(ids))
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[w] = g.scanIDs(q, qn2, k, ids[lo:hi])
		}()
	}
	parts[0] = g.scanIDs(q, qn2, k, ids[:min(per, len(ids))])
	wg.Wait()
	h := parts[0]
	for _, p := range parts[1:] {
		for i := range p.len() {
			offer(&h, p.at(i), k, true)
		}
	}
	return h.drain(nil)
}

// scanIDs returns the k nearest returnable nodes of ids to q.
func (g *Graph) scanIDs(q []float32, qn2 float32, k int, ids []uint32) farHeap {
	h := farHeap{h: make(heap, 0, k+1)}
	for i, id := range ids {
		if g.cfg.Storage == F32 && i+prefetchAhead < len(ids) {
			if next := ids[i+prefetchAhead]; next < g.n {
				o := int(next&chunkMask) * g.cfg.Dim
				prefetch(g.vf32[next>>chunkShift][o : o+g.cfg.Dim])
			}
		}
		if !g.returnable(id) {
			continue
		}
		offer(&h, item{g.dist(q, qn2, id), id}, k, true)
	}
	return h
}

// offer adds x to h, keeping the k nearest; with dedupe, an id already
// kept is not added again (it has the same distance, so it is found among
// the k kept, a scan of k items, only when it would otherwise be added).
func offer(h *farHeap, x item, k int, dedupe bool) {
	if !h.wants(x, k) {
		return
	}
	if dedupe {
		for i := range h.len() {
			if h.at(i).id == x.id {
				return
			}
		}
	}
	h.offer(x, k)
}

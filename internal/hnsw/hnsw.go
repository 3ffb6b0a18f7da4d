// Package hnsw is snkv's in-memory approximate nearest-neighbour index: a
// hierarchical navigable small-world graph (Malkov and Yashunin) over dense
// uint32 ids that the caller assigns.
//
// Layout: every node's level-0 links are a fixed block of 1 + 2M uint32 (a
// count, then the links) in chunked flat arrays; the few nodes above level 0
// have one block of 1 + M per upper level in a second flat array; vectors
// live in one arena, also chunked (4,096 nodes a chunk, so growth never
// copies), as float32, or as float16 or int8 to save memory, with an exact
// float32 rerank by the caller (its vectors, Query.Dist). Neighbours are chosen with
// hnswlib's heuristic (a candidate is kept only if it is nearer to the new
// node than to every neighbour kept so far). A deleted node is a tombstone:
// it still routes searches and is never returned; RepairDeleted rewires its
// neighbours around it and frees its slot for a later Insert.
//
// Filters are applied during the traversal; when a filter is estimated to
// match few vectors, the search is an exact scan of those instead, and a
// graph search that finds fewer than K matches is completed by one, so a
// search returns min(K, matching) results.
//
// A Graph is safe for concurrent use. Inserts are staged (the vector stored,
// the slot reserved: a short write lock), linked (under the read lock, on
// as many goroutines as the caller gives, beside searches: every node's
// link lists have a lock for their writers, and readers load the links
// atomically, as hnswlib does) and published (a short write lock again),
// so a batch becomes visible to searches at once. Deletes and loads take
// the write lock; a repair takes it whole (RepairDeleted) or in slices of
// a given length (RepairStep), between which searches run.
package hnsw

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// Metric is the distance a graph is built for.
type Metric uint8

// Metrics.
const (
	L2     Metric = iota // squared Euclidean distance
	Cosine               // 1 − cos(a, b); vectors are normalised when stored
	Dot                  // 1 − a·b (inner product)
)

// Storage is how vectors are held in memory.
type Storage uint8

// Storages.
const (
	F32 Storage = iota // 4 bytes a dimension
	F16                // 2 bytes a dimension, IEEE half precision
	I8                 // 1 byte a dimension plus 8 bytes a vector: symmetric per-vector scale
)

// Config sets up a Graph. Zero fields take the defaults.
type Config struct {
	Dim            int     // vector dimension, required
	Metric         Metric  // default L2
	Storage        Storage // default F32
	M              int     // links per node above level 0 (2M at level 0); default 16
	EfConstruction int     // candidate list of an insert; default 128
	Seed           uint64  // seeds the level draws
}

// ErrDim is returned for a vector whose length is not the graph's dimension.
var ErrDim = errors.New("hnsw: wrong vector dimension")

// ErrVector is returned for a vector holding NaN or ±Inf, or a zero vector
// under the cosine metric.
var ErrVector = errors.New("hnsw: invalid vector")

const (
	chunkShift = 12
	chunkSize  = 1 << chunkShift
	chunkMask  = chunkSize - 1
	maxLevel   = 16
	// levelEmpty marks a slot that holds no node.
	levelEmpty = -1
	// linkStripes is the number of locks the writers of link lists share
	// (node id modulo it).
	linkStripes = 1024
)

// Graph is an HNSW index.
//
// Locking: mu's write lock guards the structure (slot allocation, levels,
// vectors, the deleted and pending bits, the counters); its read lock is
// held by searches and by the linking of staged nodes. While nodes are
// being linked, link blocks change under linkMu (one stripe per node, one
// held at a time) and are read with atomic loads; the entry point is an
// atomic word, and topMu is held through the linking of a node that goes
// above the top level. The dirty bits are atomic words.
type Graph struct {
	cfg      Config
	m, m0    int // links per upper level and at level 0
	block0   int // m0 + 1
	blockU   int // m + 1
	ml       float64
	mu       sync.RWMutex
	linkMu   [linkStripes]sync.Mutex
	topMu    sync.Mutex
	ep       atomic.Uint64 // entry point: id | (top level + 1) << 32; 0 above: empty
	rng      *rand.Rand
	n        uint32 // slots in use: every id < n has been inserted once
	levels   []int8
	upperOff []uint32   // per node: offset of its upper blocks in upper, +1 (0: none)
	upper    []uint32   // blocks of 1 + m, level 1 first
	links0   [][]uint32 // chunks of chunkSize blocks of 1 + m0
	vf32     [][]float32
	vf16     [][]uint16
	vi8      [][]int8
	scale    []float32 // I8: the per-vector scale
	norm2    []float32 // I8 and F16 under L2: |x|²
	deleted  []uint64  // tombstone bits
	pending  []uint64  // staged nodes not yet published: they route, are never returned
	leaving  []uint64  // nodes a staged batch takes over or deletes: inserts do not link to them
	live     int
	tombs    int
	staged   int                    // nodes staged and not yet published
	dirty    []uint64               // atomic words, as long as the other bitmaps
	ndirty   atomic.Int64           // bits set in dirty
	pool     sync.Pool              // *scratch
	freeUp   [maxLevel + 1][]uint32 // freeUp[l]: offsets+1 of freed runs of l upper blocks, reused first
	gen      atomic.Uint64          // counts changes to the graph, for a repair done in slices
	rep      *repair                // a repair done in slices, under way (RepairStep)
}

// New returns an empty graph for cfg.
func New(cfg Config) (*Graph, error) {
	if cfg.Dim <= 0 || cfg.Dim > 1<<16 {
		return nil, fmt.Errorf("hnsw: dimension %d out of range 1..65536", cfg.Dim)
	}
	if cfg.M == 0 {
		cfg.M = 16
	}
	if cfg.EfConstruction == 0 {
		cfg.EfConstruction = 128
	}
	if cfg.M < 2 || cfg.M > 128 {
		return nil, fmt.Errorf("hnsw: M %d out of range 2..128", cfg.M)
	}
	if cfg.EfConstruction < cfg.M || cfg.EfConstruction > 4096 {
		return nil, fmt.Errorf("hnsw: EfConstruction %d out of range M..4096", cfg.EfConstruction)
	}
	if cfg.Metric > Dot || cfg.Storage > I8 {
		return nil, fmt.Errorf("hnsw: unknown metric %d or storage %d", cfg.Metric, cfg.Storage)
	}
	g := &Graph{cfg: cfg, m: cfg.M, m0: 2 * cfg.M}
	g.block0, g.blockU = g.m0+1, g.m+1
	g.ml = 1 / math.Log(float64(cfg.M))
	g.rng = rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5851f42d4c957f2d))
	return g, nil
}

// Config returns the graph's configuration with defaults filled in.
func (g *Graph) Config() Config { return g.cfg }

// Len returns the number of slots: one above the highest id ever inserted.
func (g *Graph) Len() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return int(g.n)
}

// Live returns the number of nodes that searches can return.
func (g *Graph) Live() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.live
}

// Tombstones returns the number of deleted nodes still linked in the graph.
func (g *Graph) Tombstones() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.tombs
}

// Contains reports whether id holds a live node (published: a staged node
// is not live yet).
func (g *Graph) Contains(id uint32) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.returnable(id)
}

// returnable reports whether id holds a node a search may return: not
// empty, deleted or staged.
func (g *Graph) returnable(id uint32) bool {
	return id < g.n && g.levels[id] >= 0 && !bit(g.deleted, id) && !bit(g.pending, id)
}

// entryPoint returns the entry point and the top level (-1: none).
func (g *Graph) entryPoint() (uint32, int) {
	v := g.ep.Load()
	return uint32(v), int(v>>32) - 1
}

func (g *Graph) setEntry(id uint32, top int) {
	if top < 0 {
		g.ep.Store(0)
		return
	}
	g.ep.Store(uint64(id) | uint64(top+1)<<32)
}

// MemoryBytes returns the bytes the graph's arrays hold (capacity, not
// length): vectors, links, levels and bitmaps.
func (g *Graph) MemoryBytes() int64 {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var b int64
	for _, c := range g.links0 {
		b += int64(cap(c)) * 4
	}
	for _, c := range g.vf32 {
		b += int64(cap(c)) * 4
	}
	for _, c := range g.vf16 {
		b += int64(cap(c)) * 2
	}
	for _, c := range g.vi8 {
		b += int64(cap(c))
	}
	b += int64(cap(g.levels)) + 4*int64(cap(g.upperOff)+cap(g.upper)+cap(g.scale)+cap(g.norm2))
	b += 8 * int64(cap(g.deleted)+cap(g.pending)+cap(g.leaving)+cap(g.dirty))
	return b
}

func bit(s []uint64, id uint32) bool { return int(id>>6) < len(s) && s[id>>6]&(1<<(id&63)) != 0 }

func setBit(s *[]uint64, id uint32) {
	for int(id>>6) >= len(*s) {
		*s = append(*s, 0)
	}
	(*s)[id>>6] |= 1 << (id & 63)
}

func clearBit(s []uint64, id uint32) {
	if int(id>>6) < len(s) {
		s[id>>6] &^= 1 << (id & 63)
	}
}

// grow makes room for ids below n.
func (g *Graph) grow(n uint32) {
	for g.n < n {
		if g.n&chunkMask == 0 {
			g.links0 = append(g.links0, make([]uint32, chunkSize*g.block0))
			switch g.cfg.Storage {
			case F32:
				g.vf32 = append(g.vf32, make([]float32, chunkSize*g.cfg.Dim))
			case F16:
				g.vf16 = append(g.vf16, make([]uint16, chunkSize*g.cfg.Dim))
			case I8:
				g.vi8 = append(g.vi8, make([]int8, chunkSize*g.cfg.Dim))
			}
		}
		g.levels = append(g.levels, levelEmpty)
		g.upperOff = append(g.upperOff, 0)
		if g.cfg.Storage == I8 {
			g.scale = append(g.scale, 0)
		}
		if g.cfg.Storage != F32 {
			g.norm2 = append(g.norm2, 0)
		}
		g.n++
	}
	words := int(g.n+63) >> 6
	for len(g.dirty) < words {
		g.dirty = append(g.dirty, 0)
	}
	for len(g.deleted) < words {
		g.deleted = append(g.deleted, 0)
	}
	for len(g.pending) < words {
		g.pending = append(g.pending, 0)
	}
	for len(g.leaving) < words {
		g.leaving = append(g.leaving, 0)
	}
}

// links returns the link block of id at level: [count, link...].
func (g *Graph) links(id uint32, level int) []uint32 {
	if level == 0 {
		c := g.links0[id>>chunkShift]
		o := int(id&chunkMask) * g.block0
		return c[o : o+g.block0 : o+g.block0]
	}
	o := int(g.upperOff[id]-1) + (level-1)*g.blockU
	return g.upper[o : o+g.blockU : o+g.blockU]
}

// neighbours returns the links of id at level, for code that holds the
// write lock (nothing links meanwhile).
func (g *Graph) neighbours(id uint32, level int) []uint32 {
	b := g.links(id, level)
	return b[1 : 1+b[0]]
}

// linkCount returns the number of links of block b, and linkAt link i,
// read atomically: other goroutines may be linking. A list rewritten
// meanwhile may be read half old, half new: every id read is a node.
func linkCount(b []uint32) int        { return min(int(atomic.LoadUint32(&b[0])), len(b)-1) }
func linkAt(b []uint32, i int) uint32 { return atomic.LoadUint32(&b[1+i]) }

// storeLinks writes ids as the links of block b (the caller holds the
// node's link lock, or the write lock): the links first, then the count.
func storeLinks(b []uint32, ids []uint32) {
	for i, x := range ids {
		atomic.StoreUint32(&b[1+i], x)
	}
	atomic.StoreUint32(&b[0], uint32(len(ids)))
}

// lockLinks locks the link lists of id for writing.
func (g *Graph) lockLinks(id uint32) *sync.Mutex {
	mu := &g.linkMu[id%linkStripes]
	mu.Lock()
	return mu
}

// markDirty records that id's links changed (atomic: linking goroutines
// share the words; grow made them long enough).
func (g *Graph) markDirty(id uint32) {
	w, m := &g.dirty[id>>6], uint64(1)<<(id&63)
	if atomic.LoadUint64(w)&m != 0 {
		return
	}
	if atomic.OrUint64(w, m)&m == 0 {
		g.ndirty.Add(1)
	}
}

// setLevel gives id its level, allocating its upper link blocks.
func (g *Graph) setLevel(id uint32, level int) {
	old := int(g.levels[id])
	if old == level {
		return
	}
	if g.upperOff[id] != 0 {
		g.releaseUpper(id, old)
	}
	g.levels[id] = int8(level)
	if level > 0 {
		if free := g.freeUp[level]; len(free) > 0 {
			g.upperOff[id] = free[len(free)-1]
			g.freeUp[level] = free[:len(free)-1]
			return
		}
		g.upperOff[id] = uint32(len(g.upper)) + 1
		g.upper = append(g.upper, make([]uint32, level*g.blockU)...)
	}
}

// releaseUpper clears id's upper blocks and keeps their run for the next
// node of the same level.
func (g *Graph) releaseUpper(id uint32, level int) {
	o := int(g.upperOff[id] - 1)
	clear(g.upper[o : o+level*g.blockU])
	g.freeUp[level] = append(g.freeUp[level], g.upperOff[id])
	g.upperOff[id] = 0
}

// randomLevel draws a level with P(level ≥ l) = M^−l.
func (g *Graph) randomLevel() int {
	l := int(-math.Log(1-g.rng.Float64()) * g.ml)
	return min(l, maxLevel)
}

// store puts v (already checked and, for cosine, normalised) into id's slot.
func (g *Graph) store(id uint32, v []float32) {
	d := g.cfg.Dim
	o := int(id&chunkMask) * d
	switch g.cfg.Storage {
	case F32:
		copy(g.vf32[id>>chunkShift][o:o+d], v)
	case F16:
		dst := g.vf16[id>>chunkShift][o : o+d]
		var n2 float32
		for i, x := range v {
			dst[i] = f32ToF16(x)
			y := f16table[dst[i]]
			n2 += y * y
		}
		g.norm2[id] = n2
	case I8:
		var mx float32
		for _, x := range v {
			mx = max(mx, float32(math.Abs(float64(x))))
		}
		s := mx / 127
		dst := g.vi8[id>>chunkShift][o : o+d]
		var n2 float32
		for i, x := range v {
			q := int8(0)
			if s > 0 {
				q = int8(max(-127, min(127, math.Round(float64(x/s)))))
			}
			dst[i] = q
			y := float32(q) * s
			n2 += y * y
		}
		g.scale[id], g.norm2[id] = s, n2
	}
}

// Vector returns id's vector as held in memory, decoded to float32 (for
// cosine, normalised), or nil if id holds no node.
func (g *Graph) Vector(id uint32) []float32 {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if id >= g.n || g.levels[id] < 0 {
		return nil
	}
	return g.decode(id, make([]float32, g.cfg.Dim))
}

// view returns id's vector for reading: the arena's own slice for F32 (no
// copy), else decoded into out.
func (g *Graph) view(id uint32, out []float32) []float32 {
	if g.cfg.Storage == F32 {
		o := int(id&chunkMask) * g.cfg.Dim
		return g.vf32[id>>chunkShift][o : o+g.cfg.Dim : o+g.cfg.Dim]
	}
	return g.decode(id, out)
}

func (g *Graph) decode(id uint32, out []float32) []float32 {
	d := g.cfg.Dim
	o := int(id&chunkMask) * d
	switch g.cfg.Storage {
	case F32:
		copy(out, g.vf32[id>>chunkShift][o:o+d])
	case F16:
		for i, h := range g.vf16[id>>chunkShift][o : o+d] {
			out[i] = f16table[h]
		}
	case I8:
		s := g.scale[id]
		for i, q := range g.vi8[id>>chunkShift][o : o+d] {
			out[i] = float32(q) * s
		}
	}
	return out
}

// prepare checks v (Check) and returns the form distances take: a copy,
// normalised for cosine.
func (g *Graph) prepare(v []float32, out []float32) ([]float32, error) {
	n2, err := check(v, g.cfg.Dim, g.cfg.Metric)
	if err != nil {
		return nil, err
	}
	if g.cfg.Metric == Cosine {
		return normalize(out, v, n2), nil
	}
	return append(out[:0], v...), nil
}

// dist returns the distance from the prepared query q (with |q|² qn2) to id.
func (g *Graph) dist(q []float32, qn2 float32, id uint32) float32 {
	d := g.cfg.Dim
	o := int(id&chunkMask) * d
	switch g.cfg.Storage {
	case F32:
		v := g.vf32[id>>chunkShift][o : o+d]
		if g.cfg.Metric == L2 {
			return l2(q, v)
		}
		return 1 - dot(q, v)
	case F16:
		v := g.vf16[id>>chunkShift][o : o+d]
		if g.cfg.Metric == L2 {
			return l2F16(q, v)
		}
		return 1 - dotF16(q, v)
	default:
		p := dotI8(q, g.vi8[id>>chunkShift][o:o+d]) * g.scale[id]
		if g.cfg.Metric == L2 {
			return max(0, qn2+g.norm2[id]-2*p)
		}
		return 1 - p
	}
}

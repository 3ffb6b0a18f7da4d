package vector

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"

	"github.com/snkv-go/snkv/internal/hnsw"
	"github.com/snkv-go/snkv/kvstore"
)

// load builds the in-memory state from the tables and puts it in place.
func (ix *Index) load(ctx context.Context) error {
	m, err := ix.loadMem(ctx)
	if err != nil {
		return err
	}
	ix.mu.Lock()
	ix.m = m
	ix.mu.Unlock()
	return nil
}

// loadMem builds the in-memory state from the tables: the key rows say
// which node holds which live vector; a node whose saved links were made
// for the vector it holds (same put sequence) is loaded with them, any
// other is linked again.
//
// The three tables are read at once, each in a read transaction of its
// own on its own goroutine (an open is mostly reading and, in an encrypted
// store, unsealing rows: two cores do it in about half the time). The key
// rows and the vector rows must come from the same snapshot: both read
// the sequence number, which every put and delete moves, and if they
// differ (a commit came between the two transactions' starts) the tables
// are read again, in one transaction. Graph rows may come from any
// snapshot: each is checked against its key's put sequence.
func (ix *Index) loadMem(ctx context.Context) (*mem, error) {
	m, ok, err := ix.loadParallel(ctx)
	if err != nil || ok {
		return m, err
	}
	return ix.loadSequential(ctx)
}

// loadSequential reads the three tables in one read transaction.
func (ix *Index) loadSequential(ctx context.Context) (*mem, error) {
	m, err := ix.newMemLoad()
	if err != nil {
		return nil, err
	}
	err = ix.store.View(ctx, func(tx *kvstore.Tx) error {
		t := ix.t.in(tx)
		var graph []savedRow
		var vecs loadedVecs
		if err := ix.loadKeys(ctx, t, m); err != nil {
			return err
		}
		if err := ix.loadVecs(ctx, t, m.g, &vecs); err != nil {
			return err
		}
		if err := ix.loadGraph(ctx, t, &graph); err != nil {
			return err
		}
		return ix.link(m, graph, &vecs)
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func (ix *Index) newMemLoad() (*mem, error) {
	g, err := ix.newGraph()
	if err != nil {
		return nil, err
	}
	return newMem(g), nil
}

// loadParallel reads the three tables in parallel; ok is false when the
// key and vector rows came from different snapshots.
func (ix *Index) loadParallel(ctx context.Context) (*mem, bool, error) {
	m, err := ix.newMemLoad()
	if err != nil {
		return nil, false, err
	}
	var graph []savedRow
	// The vector rows are most of the bytes: two goroutines read them,
	// half each.
	n, err := ix.blocks(ctx)
	if err != nil {
		return nil, false, err
	}
	lo, hi := loadedVecs{end: u32key(n / 2)}, loadedVecs{start: u32key(n / 2)}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i, step := range []func(tables) error{
		func(t tables) error { return ix.loadKeys(ctx, t, m) },
		func(t tables) error { return ix.loadVecs(ctx, t, m.g, &lo) },
		func(t tables) error { return ix.loadVecs(ctx, t, m.g, &hi) },
		func(t tables) error { return ix.loadGraph(ctx, t, &graph) },
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = ix.store.View(ctx, func(tx *kvstore.Tx) error { return step(ix.t.in(tx)) })
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, false, err
	}
	if lo.seq != m.applied || hi.seq != m.applied {
		return nil, false, nil
	}
	for i, ok := range hi.have {
		if ok {
			for i >= len(lo.have) {
				lo.have = append(lo.have, false)
			}
			lo.have[i] = true
		}
	}
	return m, true, ix.link(m, graph, &lo)
}

// savedRow is a graph row as read: the node, the put sequence its links
// were made for, the links.
type savedRow struct {
	node  uint32
	seq   uint64
	links [][]uint32
}

// loadKeys reads the sequence number and every key row into m.
func (ix *Index) loadKeys(ctx context.Context, t tables, m *mem) error {
	raw, err := t.meta.Get(metaSeq)
	if err != nil {
		return fmt.Errorf("seq: %w", err)
	}
	if m.applied, err = u64val(raw); err != nil {
		return err
	}
	for e, err := range scanAll(ctx, t.keys) {
		if err != nil {
			return err
		}
		r, err := decodeKeyRowMeta(e.Value)
		if err != nil {
			return fmt.Errorf("key %q: %w", e.Key, err)
		}
		if int(r.node) < len(m.keys) && m.keys[r.node] != "" {
			return fmt.Errorf("%w: keys %q and %q share node %d", ErrCorrupt, m.keys[r.node], e.Key, r.node)
		}
		m.set(r.node, e.Key, r.seq, r.expire, r.meta)
	}
	return nil
}

// loadedVecs is what loadVecs read: the sequence number of its snapshot
// and which slots got a vector, from the vector rows in [start, end) (nil:
// unbounded).
type loadedVecs struct {
	start, end []byte
	seq        uint64
	have       []bool
}

// blocks returns the number of vector rows the next node id needs (one
// point read).
func (ix *Index) blocks(ctx context.Context) (uint32, error) {
	raw, err := ix.t.meta.Get(metaNext)
	if err != nil {
		return 0, fmt.Errorf("next: %w", err)
	}
	next, err := u64val(raw)
	if err != nil {
		return 0, err
	}
	return uint32((next + uint64(ix.cfg.BlockVecs) - 1) / uint64(ix.cfg.BlockVecs)), ctx.Err()
}

// loadVecs reads the sequence number and puts every stored vector (live
// or not: the key rows, read beside, say which are) into its slot of g.
func (ix *Index) loadVecs(ctx context.Context, t tables, g *hnsw.Graph, out *loadedVecs) error {
	raw, err := t.meta.Get(metaSeq)
	if err != nil {
		return fmt.Errorf("seq: %w", err)
	}
	if out.seq, err = u64val(raw); err != nil {
		return err
	}
	bv, w := ix.cfg.BlockVecs, 4*ix.cfg.Dim
	for e, err := range t.vecs.Scan(kvstore.IterOptions{Borrow: true, Start: out.start, End: out.end}) {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(e.Key) != 4 {
			continue // CheckIntegrity reports it
		}
		base := be32(e.Key) * uint32(bv)
		for i := 0; i < bv && (i+1)*w <= len(e.Value); i++ {
			node := base + uint32(i)
			if err := g.LoadVector(node, e.Value[i*w:(i+1)*w]); err != nil {
				if errors.Is(err, hnsw.ErrVector) {
					continue // a slot's old bytes (a live one is missed below)
				}
				return fmt.Errorf("node %d: %w", node, err)
			}
			for int(node) >= len(out.have) {
				out.have = append(out.have, false)
			}
			out.have[node] = true
		}
	}
	return nil
}

// loadGraph reads every graph row that decodes (the others are linked
// again, and CheckIntegrity reports them).
func (ix *Index) loadGraph(ctx context.Context, t tables, out *[]savedRow) error {
	for e, err := range scanAll(ctx, t.graph) {
		if err != nil {
			return err
		}
		if len(e.Key) != 4 {
			continue
		}
		seq, links, err := decodeGraphRow(e.Value, ix.cfg.M)
		if err != nil {
			continue
		}
		*out = append(*out, savedRow{be32(e.Key), seq, links})
	}
	return nil
}

// link makes the graph of m: every live node whose saved links were made
// for its vector gets them, the others are linked again (on every core).
func (ix *Index) link(m *mem, graph []savedRow, vecs *loadedVecs) error {
	for node, k := range m.keys {
		if k != "" && (node >= len(vecs.have) || !vecs.have[node]) {
			return fmt.Errorf("%w: key %q has no stored vector (node %d)", ErrCorrupt, k, node)
		}
	}
	done := make([]bool, len(m.keys))
	for _, r := range graph {
		node := r.node
		if int(node) >= len(m.keys) || m.keys[node] == "" || r.seq != m.seqs[node] || done[node] {
			continue // not live, or stale: linked again below
		}
		if err := m.g.LoadNode(node, hnsw.Node{Level: len(r.links) - 1, Links: r.links}); err != nil {
			return fmt.Errorf("node %d: %w", node, err)
		}
		done[node] = true
	}
	var relink []uint32
	for node, k := range m.keys {
		if k != "" && !done[node] {
			relink = append(relink, uint32(node))
		}
	}
	m.g.Prune()
	if err := m.g.LinkLoaded(relink, 0); err != nil {
		return fmt.Errorf("linking again %d vectors: %w", len(relink), err)
	}
	return nil
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// readVector returns node's float32 vector from the vecs table of t,
// caching blocks in cache (nil: no cache).
func (ix *Index) readVector(t tables, node uint32, cache map[uint32][]byte) ([]float32, error) {
	bv := uint32(ix.cfg.BlockVecs)
	b := node / bv
	block, ok := cache[b]
	if !ok {
		var err error
		block, err = t.vecs.Get(u32key(b))
		if err != nil {
			if errors.Is(err, kvstore.ErrNotFound) {
				return nil, fmt.Errorf("%w: node %d has no vector block", ErrCorrupt, node)
			}
			return nil, err
		}
		if cache != nil {
			cache[b] = block
		}
	}
	v, ok := vecAt(block, int(node%bv), ix.cfg.Dim, make([]float32, 0, ix.cfg.Dim))
	if !ok {
		return nil, fmt.Errorf("%w: vector block %d is short", ErrCorrupt, b)
	}
	return v, nil
}

// scanAll reads every row of cf, borrowed (valid until the next one), and
// ends with ctx's error when ctx is done (looked at every 4,096 rows).
func scanAll(ctx context.Context, cf *kvstore.ColumnFamily) iter.Seq2[kvstore.Entry, error] {
	return func(yield func(kvstore.Entry, error) bool) {
		n := 0
		for e, err := range cf.Scan(kvstore.IterOptions{Borrow: true}) {
			if err == nil {
				if n++; n%4096 == 0 {
					err = ctx.Err()
				}
			}
			if !yield(e, err) || err != nil {
				return
			}
		}
	}
}

package vector

import (
	"context"
	"errors"
	"fmt"

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

// loadMem builds the in-memory state from the tables, in one read
// snapshot: the key rows say which node holds which live vector; a node
// whose saved links were made for the vector it holds (same put sequence)
// is loaded with them, any other is inserted again.
func (ix *Index) loadMem(ctx context.Context) (*mem, error) {
	g, err := ix.newGraph()
	if err != nil {
		return nil, err
	}
	m := newMem(g)
	err = ix.store.View(ctx, func(tx *kvstore.Tx) error {
		t := ix.t.in(tx)
		raw, err := t.meta.Get(metaSeq)
		if err != nil {
			return fmt.Errorf("seq: %w", err)
		}
		if m.applied, err = u64val(raw); err != nil {
			return err
		}
		return ix.loadTables(ctx, t, m)
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func (ix *Index) loadTables(ctx context.Context, t tables, m *mem) error {
	live := 0
	for e, err := range t.keys.Scan(kvstore.IterOptions{Borrow: true}) {
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
		live++
	}
	isLive := func(node uint32) bool { return int(node) < len(m.keys) && m.keys[node] != "" }
	saved := make([][][]uint32, len(m.keys))
	for e, err := range t.graph.Scan(kvstore.IterOptions{Borrow: true}) {
		if err != nil {
			return err
		}
		if len(e.Key) != 4 {
			continue // CheckIntegrity reports it
		}
		node := be32(e.Key)
		if !isLive(node) {
			continue
		}
		seq, links, err := decodeGraphRow(e.Value, ix.cfg.M)
		if err != nil || seq != m.seqs[node] {
			continue // damaged or stale: linked again below
		}
		saved[node] = links
	}
	var relink []uint32
	var vecs [][]float32
	bv := ix.cfg.BlockVecs
	buf := make([]float32, 0, ix.cfg.Dim)
	loaded := 0
	for e, err := range t.vecs.Scan(kvstore.IterOptions{Borrow: true}) {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(e.Key) != 4 {
			continue
		}
		base := be32(e.Key) * uint32(bv)
		for i := range bv {
			node := base + uint32(i)
			if !isLive(node) {
				continue
			}
			v, ok := vecAt(e.Value, i, ix.cfg.Dim, buf)
			if !ok {
				return fmt.Errorf("%w: vector block %d is short", ErrCorrupt, base/uint32(bv))
			}
			if links := saved[node]; links != nil {
				err = m.g.Load(node, v, hnsw.Node{Level: len(links) - 1, Links: links})
				saved[node] = nil
			} else {
				vecs = append(vecs, append([]float32(nil), v...))
				relink = append(relink, node)
			}
			if err != nil {
				return fmt.Errorf("node %d: %w", node, err)
			}
			loaded++
		}
	}
	if loaded != live {
		return fmt.Errorf("%w: %d keys but %d stored vectors", ErrCorrupt, live, loaded)
	}
	saved = nil
	m.g.Prune()
	if err := m.g.InsertBatch(relink, vecs, 0); err != nil {
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

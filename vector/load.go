package vector

import (
	"context"
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/internal/hnsw"
	"github.com/snkv-go/snkv/kvstore"
)

// load builds the in-memory state from the tables, in one read snapshot:
// the key rows say which node holds which live vector; a node whose saved
// links were made for the vector it holds (same put sequence) is loaded
// with them, any other is inserted again.
func (ix *Index) load(ctx context.Context) error {
	g, err := ix.newGraph()
	if err != nil {
		return err
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
		return err
	}
	ix.mu.Lock()
	ix.m = m
	ix.mu.Unlock()
	return nil
}

type savedNode struct {
	seq   uint64
	links [][]uint32
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
	for i, node := range relink {
		if err := m.g.Insert(node, vecs[i]); err != nil {
			return fmt.Errorf("node %d: %w", node, err)
		}
		vecs[i] = nil
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

// change is one applied change: key now lives at node (row) with vector
// vec, or (row == nil) key is gone.
type change struct {
	seq  uint64
	key  []byte
	row  *keyRow
	vec  []float32
	node uint32 // for a delete: the node that held key
}

// apply makes the in-memory state follow ch; the caller holds ix.mu.
func (ix *Index) apply(m *mem, ch change) error {
	old, had := m.byKey[string(ch.key)]
	if ch.row == nil {
		if had && m.keys[old] == string(ch.key) {
			m.drop(old)
			m.g.Delete(old)
		}
		return nil
	}
	if had && old == ch.row.node && m.seqs[old] == ch.row.seq {
		return nil
	}
	if had {
		m.drop(old)
		m.g.Delete(old)
	}
	m.set(ch.row.node, ch.key, ch.row.seq, ch.row.expire, ch.row.meta)
	return m.g.Insert(ch.row.node, ch.vec)
}

// committed is what a write's OnCommit hook runs: apply ch if it is the
// next change, else catch up from the log (which holds it).
func (ix *Index) committed(ch change) {
	applied, err := ix.applyNext(ch)
	if !applied {
		err = ix.sync(context.Background())
	}
	ix.report(err)
	ix.nudge()
}

// applyNext applies ch if it is the next change, and reports whether the
// memory is now past it.
func (ix *Index) applyNext(ch change) (bool, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	m := ix.m
	if m == nil || ch.seq <= m.applied {
		return true, nil
	}
	if ch.seq != m.applied+1 {
		return false, nil
	}
	m.applied = ch.seq
	return true, ix.apply(m, ch)
}

// nudge wakes the background writer when much is unsaved.
func (ix *Index) nudge() {
	ix.mu.RLock()
	m := ix.m
	ix.mu.RUnlock()
	if m != nil && m.g.Dirty() >= ix.opts.PersistStep {
		select {
		case ix.kick <- struct{}{}:
		default:
		}
	}
}

// sync applies what other processes (or this one's commits whose hooks
// have not run yet) committed: the changes logged after the sequence
// number the memory has. If the log no longer holds them (trimmed), it
// loads everything again.
func (ix *Index) sync(ctx context.Context) error {
	if err := ix.usable(ctx); err != nil {
		return err
	}
	ix.mu.RLock()
	if ix.m == nil {
		ix.mu.RUnlock()
		return ErrClosed
	}
	from := ix.m.applied
	ix.mu.RUnlock()
	var changes []change
	var upto uint64
	reload := false
	err := ix.store.View(ctx, func(tx *kvstore.Tx) error {
		t := ix.t.in(tx)
		raw, err := t.meta.Get(metaSeq)
		if err != nil {
			return err
		}
		if upto, err = u64val(raw); err != nil || upto <= from {
			return err
		}
		touched := map[string]bool{}
		var order [][]byte
		next := from + 1
		for e, err := range t.log.Scan(kvstore.IterOptions{Start: u64key(from + 1), End: u64key(upto + 1)}) {
			if err != nil {
				return err
			}
			if len(e.Key) != 8 || be64(e.Key) != next {
				reload = true
				return nil
			}
			next++
			_, _, key, err := decodeLogRow(e.Value)
			if err != nil {
				return err
			}
			if !touched[string(key)] {
				touched[string(key)] = true
				order = append(order, key)
			}
		}
		if next != upto+1 {
			reload = true
			return nil
		}
		// Keys that are gone first: a slot they freed may be taken by a
		// key applied after them.
		cache := map[uint32][]byte{}
		var present []change
		for _, key := range order {
			ch := change{seq: upto, key: key}
			raw, err := t.keys.Get(key)
			if err == nil {
				r, err := decodeKeyRow(raw)
				if err != nil {
					return fmt.Errorf("key %q: %w", key, err)
				}
				if ch.vec, err = ix.readVector(t, r.node, cache); err != nil {
					return err
				}
				ch.row = &r
				present = append(present, ch)
				continue
			} else if !errors.Is(err, kvstore.ErrNotFound) {
				return err
			}
			changes = append(changes, ch)
		}
		changes = append(changes, present...)
		return nil
	})
	if err != nil {
		return fmt.Errorf("vector: %q: catch up: %w", ix.name, err)
	}
	if reload {
		return ix.load(ctx)
	}
	if upto <= from {
		return nil
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	m := ix.m
	if m == nil {
		return ErrClosed
	}
	if m.applied >= upto {
		return nil
	}
	for _, ch := range changes {
		if err := ix.apply(m, ch); err != nil {
			return fmt.Errorf("vector: %q: catch up: %w", ix.name, err)
		}
	}
	m.applied = upto
	return nil
}

func be64(b []byte) uint64 { return uint64(be32(b))<<32 | uint64(be32(b[4:])) }

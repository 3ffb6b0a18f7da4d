package vector

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
)

// The vector layer's part of Store.CheckIntegrity and Store.Repair (see
// internal/layer.Register and docs/architecture.md): every row of every index must decode, every
// key's vector must be stored, and every saved link must name a node the
// index has allotted. Repair deletes the graph rows that fail, and links
// their nodes again (at once in an index open in this process, else by
// opening it).
func init() {
	layer.Register(kind, layer.Layer{Check: checkStore, Repair: repairStore})
}

// open indexes of this process, by store and name, for Repair.
var (
	openMu sync.Mutex
	opened = map[*kvstore.Store]map[string]*Index{}
)

func register(ix *Index) {
	openMu.Lock()
	defer openMu.Unlock()
	if opened[ix.store] == nil {
		opened[ix.store] = map[string]*Index{}
	}
	opened[ix.store][ix.name] = ix
}

func unregister(ix *Index) {
	openMu.Lock()
	defer openMu.Unlock()
	if opened[ix.store][ix.name] == ix {
		delete(opened[ix.store], ix.name)
		if len(opened[ix.store]) == 0 {
			delete(opened, ix.store)
		}
	}
}

func lookupOpen(s *kvstore.Store, name string) *Index {
	openMu.Lock()
	defer openMu.Unlock()
	return opened[s][name]
}

func checkStore(ctx context.Context, s *kvstore.Store) ([]string, error) {
	return eachIndex(ctx, s, func(name string) ([]string, error) {
		p, _, err := checkIndex(ctx, s, name)
		if err != nil {
			return nil, err
		}
		return p, nil
	})
}

// eachIndex runs fn on each index of s, in name order, and returns the
// lines fn returned, up to fn's first error.
func eachIndex(ctx context.Context, s *kvstore.Store, fn func(name string) ([]string, error)) ([]string, error) {
	names, err := List(ctx, s)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range names {
		lines, err := fn(name)
		if err != nil {
			return out, err
		}
		out = append(out, lines...)
	}
	return out, nil
}

// checkIndex returns the problems of the index name, and the graph rows
// that do not decode or name nodes out of range.
func checkIndex(ctx context.Context, s *kvstore.Store, name string) ([]string, [][]byte, error) {
	t, err := openTables(ctx, s, name)
	if err != nil {
		return []string{fmt.Sprintf("vector index %q: %v", name, err)}, nil, nil
	}
	var problems []string
	var badGraph [][]byte
	report := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf("vector index %q: ", name)+fmt.Sprintf(format, args...))
	}
	err = s.View(ctx, func(tx *kvstore.Tx) error {
		t := t.in(tx)
		raw, err := t.meta.Get(metaConfig)
		if err != nil {
			report("config: %v", err)
			return nil
		}
		cfg, err := decodeConfig(raw)
		if err != nil {
			report("%v", err)
			return nil
		}
		var seq, next uint64
		for _, c := range []struct {
			k []byte
			v *uint64
		}{{metaSeq, &seq}, {metaNext, &next}} {
			raw, err := t.meta.Get(c.k)
			if err == nil {
				*c.v, err = u64val(raw)
			}
			if err != nil {
				report("counter %s: %v", c.k, err)
			}
		}
		blocks := map[uint32]int{}
		for e, err := range t.vecs.All() {
			if err != nil {
				return err
			}
			if len(e.Key) != 4 || len(e.Value)%(4*cfg.Dim) != 0 || len(e.Value) > 4*cfg.Dim*cfg.BlockVecs {
				report("vector block %x: key of %d bytes, %d bytes of vectors", e.Key, len(e.Key), len(e.Value))
				continue
			}
			blocks[be32(e.Key)] = len(e.Value) / (4 * cfg.Dim)
		}
		used := map[uint32][]byte{}
		for e, err := range t.keys.All() {
			if err != nil {
				return err
			}
			r, err := decodeKeyRow(e.Value)
			if err == nil {
				if other, dup := used[r.node]; dup {
					report("keys %q and %q share node %d", other, e.Key, r.node)
				}
				used[r.node] = e.Key
			}
			switch {
			case err != nil:
				report("key %q: %v", e.Key, err)
			case uint64(r.node) >= next || r.seq > seq:
				report("key %q: node %d or sequence %d beyond the counters (%d, %d)", e.Key, r.node, r.seq, next, seq)
			case blocks[r.node/uint32(cfg.BlockVecs)] <= int(r.node%uint32(cfg.BlockVecs)):
				report("key %q: node %d has no stored vector", e.Key, r.node)
			}
		}
		for e, err := range t.graph.All() {
			if err != nil {
				return err
			}
			bad := func(why string) {
				report("graph row %x: %s (Repair links the node again)", e.Key, why)
				badGraph = append(badGraph, e.Key)
			}
			if len(e.Key) != 4 {
				bad("key not 4 bytes")
				continue
			}
			_, links, err := decodeGraphRow(e.Value, cfg.M)
			if err != nil {
				bad(err.Error())
				continue
			}
			for _, l := range links {
				for _, x := range l {
					if uint64(x) >= next {
						bad(fmt.Sprintf("link to node %d, beyond %d", x, next))
						break
					}
				}
			}
		}
		for e, err := range t.free.All() {
			if err != nil {
				return err
			}
			if len(e.Key) != 4 || uint64(be32(e.Key)) >= next {
				report("free row %x: not a node id below %d", e.Key, next)
			} else if k, ok := used[be32(e.Key)]; ok {
				report("node %d is free and holds key %q", be32(e.Key), k)
			}
		}
		for e, err := range t.log.All() {
			if err != nil {
				return err
			}
			if _, _, _, err := decodeLogRow(e.Value); err != nil || len(e.Key) != 8 || be64(e.Key) > seq {
				report("log row %x: %v", e.Key, err)
			}
		}
		return nil
	})
	return problems, badGraph, err
}

func repairStore(ctx context.Context, s *kvstore.Store) ([]string, error) {
	return eachIndex(ctx, s, func(name string) ([]string, error) {
		_, bad, err := checkIndex(ctx, s, name)
		if err != nil || len(bad) == 0 {
			return nil, err
		}
		t, err := openTables(ctx, s, name)
		if err != nil {
			return nil, err
		}
		if err := s.Update(ctx, func(tx *kvstore.Tx) error {
			for _, k := range bad {
				if err := tx.CF(t.graph).Delete(k); err != nil && !errors.Is(err, kvstore.ErrNotFound) {
					return err
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
		if ix := lookupOpen(s, name); ix != nil {
			err = ix.relinkRows(ctx, bad)
		} else {
			var ix *Index
			if ix, err = Open(ctx, s, name, Options{}); err == nil {
				err = ix.Close()
			}
		}
		if err != nil {
			return nil, err
		}
		return []string{fmt.Sprintf("vector index %q: rebuilt %d damaged graph rows", name, len(bad))}, nil
	})
}

// relinkRows saves again the links of the nodes whose graph rows were
// deleted.
func (ix *Index) relinkRows(ctx context.Context, keys [][]byte) error {
	ix.mu.RLock()
	if ix.m != nil {
		for _, k := range keys {
			if len(k) == 4 {
				ix.m.g.MarkDirty(be32(k))
			}
		}
	}
	ix.mu.RUnlock()
	return ix.persistAll(ctx)
}

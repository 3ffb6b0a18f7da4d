package vector

import (
	"context"
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
)

// How committed changes reach the memory.
//
// Every write of a transaction is recorded with it (record); the first
// registers one OnCommit hook, which applies them all once the transaction
// committed, and one OnRollback hook, which forgets them. Changes are
// applied by one goroutine at a time (applyMu), in sequence order: a
// transaction whose first change does not follow what the memory applied
// (another process committed in between, or a hook of this process has not
// run yet) is applied by sync, from the log. Applying a set of changes
// (applyChanges) stages the new vectors in the graph and links them on
// every core without holding ix.mu, so searches go on meanwhile and never
// see them; then, under ix.mu, the key map follows, replaced and deleted
// vectors become tombstones and the new ones are published: a search sees
// a transaction whole or not at all.
//
// Lock order: persistMu, applyMu, ix.mu, then the graph's own.

// change is one change to apply: key now lives at node (row) with vector
// vec, or (row == nil) key is gone.
type change struct {
	seq  uint64
	key  []byte
	row  *keyRow
	vec  []float32
	node uint32 // for a delete: the node that held key
}

// txChanges is what one write transaction changed in the index so far.
type txChanges struct{ changes []change }

// record adds ch to the changes of w's transaction, to be applied when it
// commits.
func (w *Tx) record(ch change) {
	ix := w.ix
	ix.txMu.Lock()
	defer ix.txMu.Unlock()
	tc := ix.txs[w.tx]
	if tc == nil {
		tc = &txChanges{}
		if ix.txs == nil {
			ix.txs = map[*kvstore.Tx]*txChanges{}
		}
		ix.txs[w.tx] = tc
		tx := w.tx
		tx.OnCommit(func() {
			ix.forget(tx)
			ix.committed(tc.changes)
		})
		tx.OnRollback(func() { ix.forget(tx) })
	}
	tc.changes = append(tc.changes, ch)
}

func (ix *Index) forget(tx *kvstore.Tx) {
	ix.txMu.Lock()
	delete(ix.txs, tx)
	ix.txMu.Unlock()
}

// mem returns the memory (nil once closed).
func (ix *Index) mem() *mem {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.m
}

// committed is what a transaction's OnCommit hook runs: apply its changes
// if they are the next ones, else catch up from the log (which holds them).
func (ix *Index) committed(chs []change) {
	if len(chs) == 0 {
		return
	}
	done, err := ix.applyCommitted(chs)
	if err == nil && !done {
		err = ix.sync(context.Background())
	}
	ix.report(err)
	ix.nudge()
}

// applyCommitted applies chs, one transaction's changes in sequence order,
// if they follow what the memory applied, and reports whether the memory
// is now past them.
func (ix *Index) applyCommitted(chs []change) (bool, error) {
	ix.applyMu.Lock()
	defer ix.applyMu.Unlock()
	m := ix.mem()
	if m == nil || ix.closed.Load() {
		return true, nil
	}
	first, last := chs[0].seq, chs[len(chs)-1].seq
	if last <= m.applied {
		return true, nil
	}
	if first != m.applied+1 {
		return false, nil
	}
	return true, ix.applyChanges(m, finalChanges(chs), last)
}

// finalChanges keeps the last change of each key, the keys that are gone
// first (a slot they freed may be taken by a key applied after them).
func finalChanges(chs []change) []change {
	last := make(map[string]int, len(chs))
	for i, ch := range chs {
		last[string(ch.key)] = i
	}
	out := make([]change, 0, len(last))
	for _, gone := range []bool{true, false} {
		for i, ch := range chs {
			if last[string(ch.key)] == i && (ch.row == nil) == gone {
				out = append(out, ch)
			}
		}
	}
	return out
}

// applyChanges makes m follow chs (at most one change a key, the keys that
// are gone first) and records upto as applied. The caller holds applyMu,
// which alone lets m change, so m is read here without ix.mu.
func (ix *Index) applyChanges(m *mem, chs []change, upto uint64) error {
	var ids []uint32
	var vecs [][]float32
	var puts []change
	for _, ch := range chs {
		if ch.row == nil {
			continue
		}
		if old, had := m.byKey[string(ch.key)]; had && old == ch.row.node && m.seqs[old] == ch.row.seq {
			continue // applied already
		}
		ids = append(ids, ch.row.node)
		vecs = append(vecs, ch.vec)
		puts = append(puts, ch)
	}
	// The nodes of keys deleted or given a new node: tombstones at Publish
	// (unless the batch takes the slot over).
	var gone []uint32
	for _, ch := range chs {
		if old, had := m.byKey[string(ch.key)]; had && (ch.row == nil || old != ch.row.node || m.seqs[old] != ch.row.seq) {
			gone = append(gone, old)
		}
	}
	b, err := m.g.Stage(ids, vecs, gone)
	if err != nil {
		return err
	}
	b.Link(0) // beside searches: they never return staged nodes
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, ch := range chs {
		if old, had := m.byKey[string(ch.key)]; had && m.keys[old] == string(ch.key) && (ch.row == nil || old != ch.row.node || m.seqs[old] != ch.row.seq) {
			m.drop(old)
		}
	}
	for _, ch := range puts {
		m.set(ch.row.node, ch.key, ch.row.seq, ch.row.expire, ch.row.meta)
	}
	b.Publish()
	m.applied = upto
	return nil
}

// nudge wakes the background writer when much is unsaved.
func (ix *Index) nudge() {
	m := ix.mem()
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
	for {
		if err := ix.usable(ctx); err != nil {
			return err
		}
		ix.mu.RLock()
		m := ix.m
		if m == nil {
			ix.mu.RUnlock()
			return ErrClosed
		}
		from := m.applied
		ix.mu.RUnlock()
		changes, upto, reload, err := ix.readChanges(ctx, from)
		if err != nil {
			return fmt.Errorf("vector: %q: catch up: %w", ix.name, ix.noIndex(err))
		}
		if reload {
			return ix.reload(ctx)
		}
		if upto <= from {
			return nil
		}
		ix.applyMu.Lock()
		cur := ix.mem()
		switch {
		case cur == nil || ix.closed.Load():
			ix.applyMu.Unlock()
			return ErrClosed
		case cur.applied >= upto:
			ix.applyMu.Unlock()
			return nil
		case cur != m || cur.applied != from:
			ix.applyMu.Unlock()
			continue // another goroutine applied part of it: read again
		}
		err = ix.applyChanges(cur, changes, upto)
		ix.applyMu.Unlock()
		if err != nil {
			return fmt.Errorf("vector: %q: catch up: %w", ix.name, err)
		}
		return nil
	}
}

// readChanges reads, in one snapshot, the sequence number upto the store
// is at and the state of every key the log entries after from touched (the
// keys that are gone first). reload says the log no longer holds them all.
func (ix *Index) readChanges(ctx context.Context, from uint64) (changes []change, upto uint64, reload bool, err error) {
	err = ix.store.View(ctx, func(tx *kvstore.Tx) error {
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
		cache := map[uint32][]byte{}
		var present []change
		for _, key := range order {
			ch := change{seq: upto, key: key}
			raw, err := t.keys.Get(key)
			if errors.Is(err, kvstore.ErrNotFound) {
				changes = append(changes, ch)
				continue
			} else if err != nil {
				return err
			}
			r, err := decodeKeyRow(raw)
			if err != nil {
				return fmt.Errorf("key %q: %w", key, err)
			}
			if ch.vec, err = ix.readVector(t, r.node, cache); err != nil {
				return err
			}
			ch.row = &r
			present = append(present, ch)
		}
		changes = append(changes, present...)
		return nil
	})
	return changes, upto, reload, err
}

// reload loads the index again and puts it in place of the memory, unless
// the memory got further meanwhile.
func (ix *Index) reload(ctx context.Context) error {
	m, err := ix.loadMem(ctx)
	if err != nil {
		return fmt.Errorf("vector: %q: reload: %w", ix.name, err)
	}
	ix.applyMu.Lock()
	defer ix.applyMu.Unlock()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.m == nil {
		return ErrClosed
	}
	if m.applied >= ix.m.applied {
		ix.m = m
	}
	return nil
}

func be64(b []byte) uint64 { return uint64(be32(b))<<32 | uint64(be32(b[4:])) }

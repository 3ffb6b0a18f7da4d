package vector

import (
	"context"
	"errors"
	"runtime"
	"time"

	"github.com/snkv-go/snkv/kvstore"
)

// logKeep is how many changes the log keeps for processes that catch up
// from it; one further behind loads the index again.
const logKeep = 1 << 16

// background saves changed graph links every PersistInterval (at once when
// PersistStep rows are waiting) and purges expired vectors every
// PurgeInterval, until Close.
func (ix *Index) background() {
	defer ix.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-ix.stop
		cancel()
	}()
	persist := newTicker(ix.opts.PersistInterval)
	defer persist.Stop()
	purge := newTicker(ix.opts.PurgeInterval)
	defer purge.Stop()
	for {
		select {
		case <-ix.stop:
			return
		case <-persist.C:
		case <-ix.kick:
		case <-purge.C:
			_, err := ix.PurgeExpired(ctx)
			ix.backgroundError(err)
			continue
		}
		for {
			n, err := ix.persistStep(ctx)
			if ix.backgroundError(err) || n < ix.opts.PersistStep {
				break
			}
		}
	}
}

// backgroundError reports err, unless it is the end of the index or the
// store, and says whether there was one.
func (ix *Index) backgroundError(err error) bool {
	if err == nil {
		return false
	}
	if !errors.Is(err, context.Canceled) && !errors.Is(err, ErrClosed) && !errors.Is(err, kvstore.ErrClosed) {
		ix.report(err)
	}
	return true
}

// persistAll saves every changed graph row.
func (ix *Index) persistAll(ctx context.Context) error {
	for {
		n, err := ix.persistStep(ctx)
		if err != nil || n == 0 {
			return err
		}
	}
}

// persistStep saves up to PersistStep changed graph rows in one
// transaction (deleting the rows of freed nodes), trims the log, and
// returns how many rows it wrote. Rows that fail to commit stay marked.
func (ix *Index) persistStep(ctx context.Context) (int, error) {
	ix.persistMu.Lock()
	defer ix.persistMu.Unlock()
	ix.mu.RLock()
	m := ix.m
	if m == nil {
		ix.mu.RUnlock()
		return 0, ErrClosed
	}
	if m.g.Tombstones() > 0 && m.g.Tombstones() >= max(64, m.g.Live()/10) {
		ix.mu.RUnlock()
		if err := ix.repair(ctx); err != nil {
			return 0, err
		}
		ix.mu.RLock()
		if m = ix.m; m == nil {
			ix.mu.RUnlock()
			return 0, ErrClosed
		}
	}
	ids := m.g.TakeDirty(ix.opts.PersistStep)
	rows := make([][]byte, len(ids))
	for i, id := range ids {
		if n, ok := m.g.Node(id); ok && int(id) < len(m.seqs) {
			rows[i] = encodeGraphRow(m.seqs[id], n.Links)
		}
	}
	applied := m.applied
	ix.mu.RUnlock()
	if len(ids) == 0 && applied <= logKeep {
		return 0, nil
	}
	err := ix.store.Update(ctx, func(tx *kvstore.Tx) error {
		t := ix.t.in(tx)
		for i, id := range ids {
			var err error
			if rows[i] != nil {
				err = t.graph.Put(u32key(id), rows[i])
			} else if err = t.graph.Delete(u32key(id)); errors.Is(err, kvstore.ErrNotFound) {
				err = nil
			}
			if err != nil {
				return err
			}
		}
		return ix.trimLog(t, applied)
	})
	if err != nil {
		ix.mu.RLock()
		if ix.m != nil {
			for _, id := range ids {
				ix.m.g.MarkDirty(id)
			}
		}
		ix.mu.RUnlock()
		return 0, err
	}
	return len(ids), nil
}

// trimLog deletes up to 4,096 log rows older than logKeep changes before
// applied.
func (ix *Index) trimLog(t tables, applied uint64) error {
	if applied <= logKeep {
		return nil
	}
	var old [][]byte
	for e, err := range t.log.Scan(kvstore.IterOptions{End: u64key(applied - logKeep)}) {
		if err != nil {
			return err
		}
		old = append(old, e.Key)
		if len(old) == 4096 {
			break
		}
	}
	for _, k := range old {
		if err := t.log.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// repairSlice is how long one step of the repair of tombstones holds the
// index's write lock: a search waits for no more than that.
const repairSlice = 200 * time.Microsecond

// repair rewires the graph around its tombstones in steps of repairSlice,
// letting searches run between them. It holds applyMu throughout: a commit
// linked meanwhile would make the repair begin again (and the links it
// adds must not name a node the repair frees); searches meanwhile lay the
// commits not yet applied over the graph instead of waiting (syncSearch).
func (ix *Index) repair(ctx context.Context) error {
	ix.applyMu.Lock()
	defer ix.applyMu.Unlock()
	if m := ix.mem(); m != nil {
		m.repairing.Store(true)
		defer m.repairing.Store(false)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		ix.mu.RLock()
		if ix.m == nil {
			ix.mu.RUnlock()
			return ErrClosed
		}
		_, done := ix.m.g.RepairStep(repairSlice)
		ix.mu.RUnlock()
		if done {
			return nil
		}
		runtime.Gosched()
	}
}

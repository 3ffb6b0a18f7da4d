package vector

import (
	"context"
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
)

// purgeBatch is how many expired vectors one purge transaction removes.
const purgeBatch = 256

// PurgeExpired removes the vectors whose expiry has passed (on the store's
// clock) from the tables and the graph, in transactions of 256, and
// returns how many it removed. Cost: O(n) to find them in memory, then a
// delete each.
func (ix *Index) PurgeExpired(ctx context.Context) (int, error) {
	if err := ix.sync(ctx); err != nil {
		return 0, err
	}
	now := layer.NowMs(ix.store)
	var keys [][]byte
	ix.mu.RLock()
	if m := ix.m; m != nil && m.nexp > 0 {
		for node, k := range m.keys {
			if k != "" && layer.Expired(m.expire[node], now) {
				keys = append(keys, []byte(k))
			}
		}
	}
	ix.mu.RUnlock()
	n := 0
	for len(keys) > 0 {
		batch := keys[:min(purgeBatch, len(keys))]
		keys = keys[len(batch):]
		done := 0
		err := ix.update(ctx, func(w *Tx) error {
			done = 0
			for _, k := range batch {
				raw, err := w.t.keys.Get(k)
				if errors.Is(err, kvstore.ErrNotFound) {
					continue
				} else if err != nil {
					return err
				}
				r, err := decodeKeyRow(raw)
				if err != nil {
					return fmt.Errorf("vector: %q: key %q: %w", ix.name, k, err)
				}
				if !layer.Expired(r.expire, now) {
					continue // written again since
				}
				if err := w.Delete(k); err != nil && !errors.Is(err, kvstore.ErrNotFound) {
					return err
				}
				done++
			}
			return nil
		})
		if err != nil {
			return n, err
		}
		n += done
	}
	return n, nil
}

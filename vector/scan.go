package vector

import (
	"fmt"
	"iter"
	"time"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
)

// scanBlocks is how many vector blocks a Scan keeps read: keys come in key
// order and their vectors in insertion order, so a larger cache would
// mostly hold blocks no later key needs.
const scanBlocks = 64

// Scan yields the live vectors of the transaction's snapshot (its own
// writes included) whose keys opts selects (prefix, range, direction), in
// key order, each an Entry as Get returns it. Expired vectors are skipped.
// opts.Borrow is ignored: every Entry belongs to the caller.
//
// Cost: one read of the key's row and, for most keys, one read of the
// vector block that holds its vector (a row of about 12 KiB), so a scan of the
// whole index reads the vector table about once per key; it does not use
// the in-memory graph. An error ends the iteration: ErrClosed after Close,
// ErrCorrupt for a row that does not decode, or the store's error (the
// transaction's context done, an I/O error).
func (w *Tx) Scan(opts kvstore.IterOptions) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		ix := w.ix
		if err := ix.usable(w.ctxOr()); err != nil {
			yield(Entry{}, err)
			return
		}
		opts.Borrow = false
		now := layer.NowMs(ix.store)
		cache := make(map[uint32][]byte, scanBlocks)
		for e, err := range w.t.keys.Scan(opts) {
			if err != nil {
				yield(Entry{}, ix.noIndex(err))
				return
			}
			r, err := decodeKeyRow(e.Value)
			if err != nil {
				yield(Entry{}, fmt.Errorf("vector: %q: key %q: %w", ix.name, e.Key, err))
				return
			}
			if layer.Expired(r.expire, now) {
				continue
			}
			if len(cache) >= scanBlocks {
				clear(cache)
			}
			v, err := ix.readVector(w.t, r.node, cache)
			if err != nil {
				yield(Entry{}, fmt.Errorf("vector: %q: key %q: %w", ix.name, e.Key, err))
				return
			}
			out := Entry{Key: e.Key, Vector: v, Value: r.value, Meta: r.meta}
			if r.expire != 0 {
				out.ExpireAt = time.UnixMilli(r.expire)
			}
			if !yield(out, nil) {
				return
			}
		}
	}
}

package vector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/snkv-go/snkv/internal/hnsw"
	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
)

// Tx is an index bound to a transaction of its store: writes land in the
// transaction (and in the index's memory only once it commits), reads and
// searches see its snapshot and its own writes. Like the kvstore.Tx, it
// belongs to one goroutine at a time.
type Tx struct {
	ix *Index
	tx *kvstore.Tx
	t  tables
}

// In binds the index to tx. Writes need a writable tx (else
// kvstore.ErrReadOnlyTx).
func (ix *Index) In(tx *kvstore.Tx) *Tx { return &Tx{ix: ix, tx: tx, t: ix.t.in(tx)} }

// checkKey is the one check of a key's size, as the store makes it:
// kvstore.ErrInvalidKey for an empty key, kvstore.ErrKeyTooLarge for one
// over kvstore.MaxKeySize.
func (ix *Index) checkKey(op string, key []byte) error {
	switch {
	case len(key) == 0:
		return fmt.Errorf("vector: %q: %s: %w", ix.name, op, kvstore.ErrInvalidKey)
	case len(key) > kvstore.MaxKeySize:
		return fmt.Errorf("vector: %q: %s: %w", ix.name, op, kvstore.ErrKeyTooLarge)
	}
	return nil
}

// check validates one item and returns its expiry (ms, 0: none).
func (ix *Index) check(key []byte, vec []float32, p Put, now time.Time) (int64, error) {
	if err := ix.checkKey("put", key); err != nil {
		return 0, err
	}
	if err := hnsw.Check(vec, ix.cfg.Dim, hnsw.Metric(ix.cfg.Metric)); err != nil {
		return 0, ix.inputError(fmt.Sprintf("key %q", key), err)
	}
	exp, err := layer.ExpiryMs(now, p.TTL, p.ExpireAt)
	if err != nil {
		return 0, fmt.Errorf("vector: %q: key %q: %w", ix.name, key, err)
	}
	return exp, nil
}

// Put stores vec under key (replacing the key's vector, value and
// metadata) in the transaction. Bad input writes nothing and fails with
// kvstore.ErrInvalidKey, kvstore.ErrKeyTooLarge, ErrDim, ErrVector,
// kvstore.ErrInvalidTTL or kvstore.ErrClockRange (see Put.TTL), or
// kvstore.ErrValueTooLarge (a value with its metadata over the store's
// Options.MaxValueSize, or an index whose packed rows, 12 KiB, are);
// other errors: kvstore.ErrReadOnlyTx, and the store's.
// Cost: a few point reads and writes, one of them the rewrite of the row
// packing the vector with its neighbours (about 12 KiB).
func (w *Tx) Put(key []byte, vec []float32, p Put) error {
	return w.PutBatch([]Item{{Key: key, Vector: vec, Put: p}})
}

// PutBatch stores every item in the transaction, in order (a key given
// twice ends with the later one). Every item is checked first: one bad
// item writes nothing. It costs less than the same Puts one by one: each
// packed row is written once.
func (w *Tx) PutBatch(items []Item) error {
	ix := w.ix
	if err := w.writable("put"); err != nil {
		return err
	}
	now := ix.store.Clock().Now()
	exp := make([]int64, len(items))
	for i, it := range items {
		var err error
		if exp[i], err = ix.check(it.Key, it.Vector, it.Put, now); err != nil {
			return err
		}
	}
	if err := w.fits(items); err != nil {
		return err
	}
	seq, next, err := w.counters()
	if err != nil {
		return err
	}
	reuse, err := w.takeFree(len(items))
	if err != nil {
		return err
	}
	var freed []uint32
	bv := uint32(ix.cfg.BlockVecs)
	blocks := map[uint32][]byte{}
	var order []uint32
	for i, it := range items {
		var node uint32
		if len(reuse) > 0 {
			node, reuse = reuse[0], reuse[1:]
		} else {
			if next >= math.MaxUint32 {
				return fmt.Errorf("vector: %q: put: %w: node ids exhausted", ix.name, kvstore.ErrInvalidArgument)
			}
			node = uint32(next)
			next++
		}
		if raw, err := w.t.keys.Get(it.Key); err == nil {
			old, err := decodeKeyRowMeta(raw)
			if err != nil {
				return fmt.Errorf("vector: %q: key %q: %w", ix.name, it.Key, err)
			}
			freed = append(freed, old.node)
		} else if !errors.Is(err, kvstore.ErrNotFound) {
			return err
		}
		seq++
		b := node / bv
		block, ok := blocks[b]
		if !ok {
			block, err = w.t.vecs.Get(u32key(b))
			if err != nil && !errors.Is(err, kvstore.ErrNotFound) {
				return err
			}
			order = append(order, b)
		}
		blocks[b] = setVec(block, int(node%bv), it.Vector)
		row := keyRow{node: node, seq: seq, expire: exp[i], value: it.Value, meta: it.Meta}
		if err := w.t.keys.Put(it.Key, row.encode()); err != nil {
			return err
		}
		if err := w.t.log.Put(u64key(seq), encodeLogRow(opPut, node, it.Key)); err != nil {
			return err
		}
		ch := change{seq: seq, key: append([]byte(nil), it.Key...), row: &row, vec: append([]float32(nil), it.Vector...)}
		row.value = nil // memory keeps no values
		w.record(ch)
	}
	for _, b := range order {
		if err := w.t.vecs.Put(u32key(b), blocks[b]); err != nil {
			return err
		}
	}
	for _, node := range freed {
		if err := w.t.free.Put(u32key(node), nil); err != nil {
			return err
		}
	}
	return w.setCounters(seq, next)
}

// fits makes sure, before the batch writes anything, that its largest row
// (a key's row with its value and metadata, or the index's packed vector
// row) is within the store's limit (Store.MaxValueSize): the store would
// refuse it in the middle of the batch, after the rows written before it,
// and a caller that went on to commit would commit half a batch.
func (w *Tx) fits(items []Item) error {
	ix := w.ix
	limit := ix.store.MaxValueSize()
	if n := 4 * ix.cfg.Dim * ix.cfg.BlockVecs; n > limit {
		return fmt.Errorf("vector: %q: put: rows of %d vectors of %d dimensions (%d bytes): %w: at most %d", ix.name, ix.cfg.BlockVecs, ix.cfg.Dim, n, kvstore.ErrValueTooLarge, limit)
	}
	for _, it := range items {
		if n := keyRowSize(it.Value, it.Meta); n > limit {
			return fmt.Errorf("vector: %q: key %q: value and metadata of %d bytes: %w: at most %d", ix.name, it.Key, n, kvstore.ErrValueTooLarge, limit)
		}
	}
	return nil
}

// takeFree takes up to n slots of deleted vectors from the free table, the
// lowest first.
func (w *Tx) takeFree(n int) ([]uint32, error) {
	var nodes []uint32
	var keys [][]byte
	for e, err := range w.t.free.All() {
		if err != nil {
			return nil, err
		}
		if len(e.Key) != 4 {
			continue // CheckIntegrity reports it
		}
		nodes = append(nodes, be32(e.Key))
		keys = append(keys, e.Key)
		if len(nodes) == n {
			break
		}
	}
	for _, k := range keys {
		if err := w.t.free.Delete(k); err != nil {
			return nil, err
		}
	}
	return nodes, nil
}

func (w *Tx) ctxOr() context.Context {
	if c := w.tx.Context(); c != nil {
		return c
	}
	return context.Background()
}

func (w *Tx) counters() (seq, next uint64, err error) {
	raw, err := w.t.meta.Get(metaSeq)
	if err == nil {
		seq, err = u64val(raw)
	}
	if err == nil {
		raw, err = w.t.meta.Get(metaNext)
	}
	if err == nil {
		next, err = u64val(raw)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("vector: %q: counters: %w", w.ix.name, w.ix.noIndex(err))
	}
	return seq, next, nil
}

func (w *Tx) setCounters(seq, next uint64) error {
	if err := w.t.meta.Put(metaSeq, u64key(seq)); err != nil {
		return err
	}
	return w.t.meta.Put(metaNext, u64key(next))
}

// Delete removes key's vector in the transaction. A missing or expired key
// gives ErrNotFound (an expired one is removed all the same, if the
// transaction commits). The vector's
// slot goes to the free table, where a later put takes it (and overwrites
// the vector's bytes in its packed row).
func (w *Tx) Delete(key []byte) error {
	ix := w.ix
	if err := w.writable("delete"); err != nil {
		return err
	}
	if err := ix.checkKey("delete", key); err != nil {
		return err
	}
	raw, err := w.t.keys.Get(key)
	if err != nil {
		return w.missing(err)
	}
	r, err := decodeKeyRow(raw)
	if err != nil {
		return fmt.Errorf("vector: %q: key %q: %w", ix.name, key, err)
	}
	seq, next, err := w.counters()
	if err != nil {
		return err
	}
	seq++
	if err := w.t.keys.Delete(key); err != nil {
		return err
	}
	if err := w.t.log.Put(u64key(seq), encodeLogRow(opDelete, r.node, key)); err != nil {
		return err
	}
	if err := w.t.free.Put(u32key(r.node), nil); err != nil {
		return err
	}
	w.record(change{seq: seq, key: append([]byte(nil), key...), node: r.node})
	if err := w.setCounters(seq, next); err != nil {
		return err
	}
	if layer.Expired(r.expire, layer.NowMs(ix.store)) {
		return errExpired
	}
	return nil
}

// errExpired is Tx.Delete's ErrNotFound for a key that had expired: the
// delete was made, and Index.Delete commits it.
var errExpired = fmt.Errorf("%w: the key had expired", kvstore.ErrNotFound)

// Get returns key's vector, value, metadata and expiry as the transaction
// sees them; ErrNotFound if missing or expired.
func (w *Tx) Get(key []byte) (Entry, error) {
	ix := w.ix
	if err := ix.usable(w.ctxOr()); err != nil {
		return Entry{}, err
	}
	if err := ix.checkKey("get", key); err != nil {
		return Entry{}, err
	}
	raw, err := w.t.keys.Get(key)
	if err != nil {
		return Entry{}, w.missing(err)
	}
	r, err := decodeKeyRow(raw)
	if err != nil {
		return Entry{}, fmt.Errorf("vector: %q: key %q: %w", ix.name, key, err)
	}
	if layer.Expired(r.expire, layer.NowMs(ix.store)) {
		return Entry{}, kvstore.ErrNotFound
	}
	v, err := ix.readVector(w.t, r.node, nil)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{Key: append([]byte(nil), key...), Vector: v, Value: r.value, Meta: r.meta}
	if r.expire != 0 {
		e.ExpireAt = time.UnixMilli(r.expire)
	}
	return e, nil
}

// Contains reports whether key has a live vector in the transaction; a
// missing index is ErrNoIndex, not false.
func (w *Tx) Contains(key []byte) (bool, error) {
	_, err := w.Get(key)
	if errors.Is(err, kvstore.ErrNotFound) && !errors.Is(err, ErrNoIndex) {
		return false, nil
	}
	return err == nil, err
}

// Put is Tx.Put in a transaction of its own.
func (ix *Index) Put(ctx context.Context, key []byte, vec []float32, p Put) error {
	return ix.update(ctx, func(w *Tx) error { return w.Put(key, vec, p) })
}

// PutBatch is Tx.PutBatch in a transaction of its own.
func (ix *Index) PutBatch(ctx context.Context, items []Item) error {
	return ix.update(ctx, func(w *Tx) error { return w.PutBatch(items) })
}

// Delete is Tx.Delete in a transaction of its own (which commits the
// removal of an expired key, and returns ErrNotFound).
func (ix *Index) Delete(ctx context.Context, key []byte) error {
	expired := false
	err := ix.update(ctx, func(w *Tx) error {
		err := w.Delete(key)
		if err == errExpired {
			expired, err = true, nil
		}
		return err
	})
	if err == nil && expired {
		return errExpired
	}
	return err
}

// Get is Tx.Get in a read transaction of its own.
func (ix *Index) Get(ctx context.Context, key []byte) (Entry, error) {
	var e Entry
	err := ix.view(ctx, func(w *Tx) (err error) { e, err = w.Get(key); return err })
	return e, err
}

// Contains is Tx.Contains in a read transaction of its own.
func (ix *Index) Contains(ctx context.Context, key []byte) (bool, error) {
	var ok bool
	err := ix.view(ctx, func(w *Tx) (err error) { ok, err = w.Contains(key); return err })
	return ok, err
}

// Count returns the number of live vectors (expired ones not yet purged are
// not counted), after applying what other processes committed. Cost: O(n)
// when some vectors have an expiry, else O(1).
func (ix *Index) Count(ctx context.Context) (int, error) {
	if err := ix.sync(ctx); err != nil {
		return 0, err
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	m := ix.m
	if m == nil {
		return 0, ErrClosed
	}
	if m.nexp == 0 {
		return len(m.byKey), nil
	}
	now := layer.NowMs(ix.store)
	n := 0
	for _, node := range m.byKey {
		if m.live(node, now) {
			n++
		}
	}
	return n, nil
}

func (ix *Index) update(ctx context.Context, fn func(*Tx) error) error {
	if err := ix.usable(ctx); err != nil {
		return err
	}
	return ix.store.Update(ctx, func(tx *kvstore.Tx) error { return fn(ix.In(tx)) })
}

func (ix *Index) view(ctx context.Context, fn func(*Tx) error) error {
	if err := ix.usable(ctx); err != nil {
		return err
	}
	return ix.store.View(ctx, func(tx *kvstore.Tx) error { return fn(ix.In(tx)) })
}

// writable reports why op cannot write through w: the index is closed or
// its context done, or the transaction is read-only.
func (w *Tx) writable(op string) error {
	if err := w.ix.usable(w.ctxOr()); err != nil {
		return err
	}
	if !w.tx.Writable() {
		return fmt.Errorf("vector: %q: %s: %w", w.ix.name, op, kvstore.ErrReadOnlyTx)
	}
	return nil
}

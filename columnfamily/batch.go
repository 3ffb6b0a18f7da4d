package columnfamily

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/snkv-go/snkv/internal/changelog"
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/family"
	"github.com/snkv-go/snkv/internal/rowcodec"
)

type opKind uint8

const (
	opPut opKind = iota
	opPutTTL
	opDelete
)

type batchOp struct {
	kind       opKind
	key, value []byte
	ttl        time.Duration
}

// Batch collects puts and deletes to apply to one column family in a single
// transaction with ColumnFamily.Apply. The zero value is an empty batch. A
// Batch keeps the slices it is given until it is applied or reset; it is not
// safe for concurrent use.
type Batch struct {
	ops []batchOp
}

// Put adds a put of value under key.
func (b *Batch) Put(key, value []byte) {
	b.ops = append(b.ops, batchOp{kind: opPut, key: key, value: value})
}

// PutTTL adds a put of value under key that expires d after the batch is
// applied.
func (b *Batch) PutTTL(key, value []byte, d time.Duration) {
	b.ops = append(b.ops, batchOp{kind: opPutTTL, key: key, value: value, ttl: d})
}

// Delete adds a delete of key. Deleting a missing key in a batch is not an
// error.
func (b *Batch) Delete(key []byte) { b.ops = append(b.ops, batchOp{kind: opDelete, key: key}) }

// Len returns the number of operations in the batch.
func (b *Batch) Len() int {
	if b == nil {
		return 0
	}
	return len(b.ops)
}

// Reset empties the batch for reuse.
func (b *Batch) Reset() {
	if b != nil {
		b.ops = b.ops[:0]
	}
}

// Apply writes every operation of b in one transaction (the handle's, when
// bound to one). Every operation is checked before anything is written: one
// bad key, value or TTL fails the whole batch and writes nothing.
//
// The operations are written in key order, and those on the same key in
// the order they were added, so the result is the one of writing them in
// order: a later put or delete of a key wins. Key order is what makes a
// large batch of random keys fast (each B-tree page is visited once, not
// once per key that lands on it; 200,000 random keys load about five
// times faster); a column family's change feed records the batch's
// changes in that order.
func (cf *ColumnFamily) Apply(ctx context.Context, b *Batch) error {
	if err := cf.alive(); err != nil {
		return err
	}
	if err := family.CheckContext(ctx); err != nil {
		return err
	}
	if b == nil {
		return fmt.Errorf("%w: nil batch", engine.ErrInvalidArgument)
	}
	nowMs := cf.nowMs()
	exps := make([]int64, len(b.ops))
	var nbytes uint64
	hasTTL := false
	for i, op := range b.ops {
		var err error
		switch op.kind {
		case opDelete:
			err = rowcodec.CheckKey(op.key)
		case opPut, opPutTTL:
			err = rowcodec.CheckKV(op.key, op.value, cf.m.Env.MaxValueSize)
			nbytes += uint64(len(op.key) + len(op.value))
		}
		if err == nil && op.kind == opPutTTL {
			exps[i], err = expiry.ExpiryFromTTL(nowMs, op.ttl)
			hasTTL = true
		}
		if err != nil {
			return fmt.Errorf("batch operation %d: %w", i, err)
		}
	}
	if len(b.ops) == 0 {
		return nil
	}
	if err := cf.alive(); err != nil {
		return err
	}
	var puts, dels uint64
	err := cf.m.Env.Update(ctx, cf.tx, cf.m.Name+": apply batch", func(ctx context.Context, tx *engine.Tx) error {
		c := tx.Conn()
		if err := cf.verify(ctx, tx); err != nil {
			return err
		}
		sh := cf.m.Writing()
		cd := cf.m.Codec(sh)
		if hasTTL {
			if err := cf.m.EnsureTTL(ctx, c, tx); err != nil {
				return err
			}
		}
		order := keyOrder(b.ops)
		for j := range b.ops {
			i := j
			if order != nil {
				i = order[j]
			}
			op := b.ops[i]
			var err error
			switch op.kind {
			case opPut:
				err = cd.Put(ctx, c, op.key, op.value)
				err = cf.feed(ctx, tx, err, changelog.OpPut, op.key, op.value, changelog.NoExpiry)
				puts++
			case opPutTTL:
				err = cf.m.PutExpiring(ctx, c, op.key, op.value, exps[i])
				err = cf.feed(ctx, tx, err, changelog.OpPut, op.key, op.value, exps[i])
				puts++
			case opDelete:
				var n int64
				ok, found, ferr := c.Delete(&sh.Objects, op.key, true)
				switch {
				case ferr != nil:
					err = ferr
				case ok && found:
					n = 1
				case !ok:
					n, err = c.Exec(ctx, sh.SQL.Del, op.key)
				}
				if n > 0 {
					err = cf.feed(ctx, tx, err, changelog.OpDelete, op.key, nil, changelog.NoExpiry)
				}
				dels += uint64(n)
			}
			if err != nil {
				return fmt.Errorf("batch operation %d: %w", i, err)
			}
		}
		return nil
	})
	if err == nil {
		st := &cf.db().Stats
		st.Puts.Add(puts)
		st.Deletes.Add(dels)
		st.BytesWritten.Add(nbytes)
	}
	return err
}

// sortMin is the batch size from which Apply sorts the operations by key:
// below it, the pages a batch touches stay in the cache anyway.
const sortMin = 64

// keyOrder returns the indexes of ops in the order Apply writes them: by
// key, operations on the same key in the order they were added; nil when
// the batch is written as it was added (a small batch, or one already in
// key order: an append), which costs no allocation.
func keyOrder(ops []batchOp) []int {
	if len(ops) < sortMin || slices.IsSortedFunc(ops, func(a, b batchOp) int { return bytes.Compare(a.key, b.key) }) {
		return nil
	}
	// Sort (first eight bytes, index) pairs: most comparisons end on the
	// word, without following a key; equal words compare the keys, and
	// equal keys their indexes, so the order is the stable one.
	type entry struct {
		word uint64
		i    int
	}
	es := make([]entry, len(ops))
	order := make([]int, len(ops))
	for i, op := range ops {
		var w [8]byte
		copy(w[:], op.key)
		es[i] = entry{binary.BigEndian.Uint64(w[:]), i}
	}
	slices.SortFunc(es, func(x, y entry) int {
		if x.word != y.word {
			return cmp.Compare(x.word, y.word)
		}
		if c := bytes.Compare(ops[x.i].key, ops[y.i].key); c != 0 {
			return c
		}
		return x.i - y.i
	})
	for j, e := range es {
		order[j] = e.i
	}
	return order
}

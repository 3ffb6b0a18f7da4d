package timelog

import (
	"context"
	"fmt"
	"math"

	"github.com/snkv-go/snkv/kvstore"
)

// Conversion of the values table from the layout before value blocks: one
// row per value, keyed by the handle (8 bytes, big-endian), the value as
// it is, and no meta row "valueslayout". A writable Open converts such a
// table to blocks (valblock.go) in one write transaction, so a crash or an
// error leaves the old layout whole and the next writable Open converts
// again; a read-only Open refuses it with ErrValuesLayout.

// Bounds of one chunk of old rows read before the blocks they complete are
// written: an iteration is never held open across a write of the same
// transaction (a write makes it copy every row it has not reached yet).
const (
	convertChunkRows  = 4096
	convertChunkBytes = 4 << 20
)

// testConvertChunk, set only by tests, replaces convertChunkRows and is
// called after each chunk is written; an error it returns aborts the
// conversion (the transaction rolls back).
var testConvertChunk struct {
	rows  int
	after func() error
}

// errOldValuesLayout is the error of a read-only Open of a log whose
// values table has one row per value.
func (l *Log) errOldValuesLayout() error {
	return fmt.Errorf("timelog: %q: %w: one row per value, from before value blocks: open the log writable once to convert it", l.name, ErrValuesLayout)
}

// convertValues rewrites the values table of one row per value into value
// blocks packed as a flush packs them, and writes the layout row, in one
// write transaction. The rows are read in handle order, in chunks; the
// block holding handles h1 < h2 < ... is written over the old row of h1
// (same key), the old rows of the others are deleted, and a lone value
// row (its key longer) replaces the old row of its handle. A row that is
// not an old value row (a key other than 8 bytes) is ErrCorrupt, and
// nothing is changed.
func (l *Log) convertValues(ctx context.Context) error {
	chunkRows := convertChunkRows
	if testConvertChunk.rows > 0 {
		chunkRows = testConvertChunk.rows
	}
	err := l.store.Update(ctx, func(tx *kvstore.Tx) error {
		t := l.t.in(tx)
		layout, err := getU64(t.meta, metaValuesLayout)
		switch {
		case err != nil:
			return err
		case layout == valuesLayout: // converted meanwhile
			return nil
		case layout != 0:
			return fmt.Errorf("timelog: %q: %w: layout %d (this library reads layout %d)", l.name, ErrValuesLayout, layout, valuesLayout)
		}
		p := newPacker(l.store.MaxValueSize(), l.cfg.ValueBlockBytes)
		from := []byte{} // the first key not read yet
		for from != nil {
			n, size := 0, 0
			last := uint64(0)
			for e, err := range t.values.Range(from, nil) {
				if err != nil {
					return fmt.Errorf("read old value rows: %w", err)
				}
				if len(e.Key) != 8 {
					return fmt.Errorf("%w: row %x in a values table of one row per value", ErrCorrupt, e.Key)
				}
				last = be.Uint64(e.Key)
				p.add(last, e.Value, false) // the iteration hands out copies: no clone
				n++
				size += len(e.Value)
				if n == chunkRows || size >= convertChunkBytes {
					break
				}
			}
			switch {
			case n < chunkRows && size < convertChunkBytes, last == math.MaxUint64:
				from = nil // the table is read
			default:
				// Past every old row read and every row written for them
				// (a lone row of h sorts between h and h+1).
				from = u64(last + 1)
			}
			if from == nil {
				if err := putConverted(t, p.done()); err != nil {
					return err
				}
			} else if err := putConverted(t, p.take()); err != nil {
				return err
			}
			if f := testConvertChunk.after; f != nil {
				if err := f(); err != nil {
					return err
				}
			}
		}
		return t.meta.Put([]byte(metaValuesLayout), u64(valuesLayout))
	})
	if err != nil {
		return fmt.Errorf("convert the values table to value blocks: %w", err)
	}
	return nil
}

// putConverted writes rows made from old value rows and deletes the old
// rows they replace.
func putConverted(t tables, rows []blockRow) error {
	for _, row := range rows {
		b, err := decodeBlock(row.key, row.value)
		if err != nil {
			return fmt.Errorf("converted value row %x: %w", row.key, err)
		}
		first := 1 // the old row of the first handle has the block's key
		if b.idx == nil {
			first = 0 // a lone row's key is longer than the old row's
		}
		for i := first; i < b.n; i++ {
			if err := t.values.Delete(u64(b.handle(i))); err != nil {
				return fmt.Errorf("delete old value row %d: %w", b.handle(i), err)
			}
		}
	}
	return putRows(t, rows)
}

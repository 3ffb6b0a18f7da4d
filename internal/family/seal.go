package family

import (
	"bytes"
	"context"
	"errors"
	"sync"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/internal/rowcodec"
	"github.com/snkv-go/snkv/internal/seal"
)

// A family's values are stored through the row codec (package rowcodec):
// every write, through SQL or below it, stores what Encode returns; every
// read gives Decode (or DecodeOn) what it found.

// Sealing returns the encryption state when the values of f are sealed:
// an encrypted store and a sealed table. Otherwise nil.
func (f *Family) Sealing() *seal.State {
	if !f.Sealed.Load() {
		return nil
	}
	return f.Env.Seal.Load()
}

// Encode returns what a write on c stores for value under key: the value,
// or its sealed form (in c's scratch buffer: the write copies it); and the
// row's checksum (nil for a version-1 table, which has no column for it
// and is never encrypted).
func (f *Family) Encode(c *engine.Conn, sh *Shape, key, value []byte, hasTTL bool) (stored []byte, sum any) {
	if st := f.Sealing(); st != nil && st.Write != nil && sh.Objects.Crc {
		stored = st.Write.Seal(c.Scratch(len(value)+seal.Overhead), f.Name, key, value)
		return stored, rowcodec.WithTTL(rowcodec.RowSum(key, stored), hasTTL) ^ st.Write.Flag()
	}
	return NonNil(value), sh.Sum(key, value, hasTTL)
}

// Decode is rowcodec.Decode of a row of f with the encryption state the
// store follows now; DecodeOn also reads a snapshot older than that.
func (f *Family) Decode(st *engine.Counters, key, stored []byte, sum, crc int64, kind int, strict bool, dst []byte, adBuf *[]byte) (value []byte, opened bool, err error) {
	return rowcodec.Decode(f.Sealing(), f.Sealed.Load(), f.Name, st, key, stored, sum, crc, kind, strict, dst, adBuf)
}

// Snapshots that began before a conversion ended.
//
// The store's encryption state changes when a conversion starts and ends,
// each time after the commit that writes the header recording it, while
// reads that began before may still be decoding the rows of their own
// snapshot: values in the clear, or sealed under a data key the store has
// since retired. Every row says its form (its checksum's flag), so such a
// read fails with ErrAuth under the new state. DecodeOn then reads, inside
// the same read transaction, the encryption header (and, for a hidden
// table, its sealed marker) that the read's snapshot holds, and decodes
// again with the state the store followed with that header: every header
// this process has followed is kept with its state (snapHistory). A row
// that fails under its own snapshot's state too is reported as it was.
//
// The first decode uses the current state, which during a conversion reads
// both forms and otherwise equals the state of every snapshot begun since
// the last change: a read pays for the look-up only in the rare case, and a
// row is accepted only in a form its snapshot or the store accepts now.

// snapHistory maps each encryption header a store has followed, as stored
// in the file, to the state it was followed with.
type snapHistory struct {
	mu       sync.RWMutex
	byHeader map[string]*seal.State
}

func (h *snapHistory) add(header []byte, st *seal.State) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byHeader == nil {
		h.byHeader = map[string]*seal.State{}
	}
	h.byHeader[string(header)] = st
}

func (h *snapHistory) get(header []byte) *seal.State {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.byHeader[string(header)]
}

// Follow makes the row codec follow st (nil: no encryption), whose header,
// as stored in the file, is header: a read whose snapshot holds that header
// reads with st even after the store has moved on.
func (e *Env) Follow(st *seal.State, header []byte) {
	if st != nil {
		e.past.add(header, st)
	}
	e.Seal.Store(st)
}

// Followed returns the state the store followed with encryption header
// header, or nil if it never followed that header.
func (e *Env) Followed(header []byte) *seal.State { return e.past.get(header) }

// SnapSeal is the encryption state of one read's snapshot, once DecodeOn
// has looked it up (Known).
type SnapSeal struct {
	Known  bool
	ss     *seal.State
	sealed bool
}

// State returns the encryption state the snapshot's rows are read with
// (nil: in the clear); only meaningful when Known.
func (s *SnapSeal) State() *seal.State {
	if !s.sealed {
		return nil
	}
	return s.ss
}

// snapshotSeal reads, on c inside its transaction, the encryption header
// and the sealed marker of f's table that c's snapshot holds, and returns
// the state the store followed with that header (nil: values in the
// clear) and whether the table's values are sealed; ok is false when it
// cannot tell (a header this process never followed, or a failed read).
func (f *Family) snapshotSeal(ctx context.Context, c *engine.Conn) (ss *seal.State, sealed, ok bool) {
	rows, err := c.Query(ctx, `SELECT name, value FROM `+layout.Quote(layout.MetaTable)+` WHERE name IN (?1, ?2)`, layout.SealHeaderRow, layout.SealedMarker(f.Name))
	if err != nil {
		return nil, false, false
	}
	var h []byte
	sealed = !layout.IsHidden(f.Name)
	for rows.Next() {
		if string(rows.RawBytes(0)) == layout.SealHeaderRow {
			h = bytes.Clone(rows.RawBytes(1))
		} else {
			sealed = true
		}
	}
	if rows.Close() != nil {
		return nil, false, false
	}
	if h == nil || !sealed {
		return nil, sealed, true
	}
	if ss = f.Env.past.get(h); ss == nil {
		return nil, false, false
	}
	return ss, sealed, true
}

// DecodeOn is Decode for a read on c: with the state snap knows, or else
// with the state the store follows now, and, when that fails with
// ErrAuth, with the state of c's snapshot (see above), which it records in
// snap (nil: nothing to record it in).
func (f *Family) DecodeOn(ctx context.Context, c *engine.Conn, snap *SnapSeal, st *engine.Counters, key, stored []byte, sum, crc int64, kind int, strict bool, dst []byte, adBuf *[]byte) ([]byte, bool, error) {
	ss, sealed := f.Sealing(), f.Sealed.Load()
	if snap != nil && snap.Known {
		ss, sealed = snap.ss, snap.sealed
	}
	v, opened, err := rowcodec.Decode(ss, sealed, f.Name, st, key, stored, sum, crc, kind, strict, dst, adBuf)
	if err == nil || c == nil || (snap != nil && snap.Known) || !errors.Is(err, engine.ErrAuth) {
		return v, opened, err
	}
	ss2, sealed2, ok := f.snapshotSeal(ctx, c)
	if !ok {
		return v, opened, err
	}
	if snap != nil {
		*snap = SnapSeal{Known: true, ss: ss2, sealed: sealed2}
	}
	if ss2 == ss && sealed2 == sealed {
		return v, opened, err
	}
	var scrap engine.Counters // the first attempt counted the row already
	return rowcodec.Decode(ss2, sealed2, f.Name, &scrap, key, stored, sum, crc, kind, strict, dst, adBuf)
}

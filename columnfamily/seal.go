package columnfamily

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/seal"
)

// The value step of the row codec. Every write, through SQL or below it,
// stores what encode returns; every read gives decode what it found. In a
// store without encryption they are the checksum alone; in an encrypted
// store they seal and open the values of sealed tables (every column
// family, and the hidden tables made sealed), bound to the table and key.
//
// A row says how its value is stored through its checksum, which covers
// the stored bytes: the plain CRC for a value in the clear, the CRC with
// seal.Flag(gen) mixed in for a value sealed under the data key of
// generation gen. So a conversion can stop anywhere and resume, and a
// store never reads a sealed value as one in the clear, or the reverse:
// the wrong form is an authentication error, not a value.

// sealedMarker is the meta table row that makes hidden table table sealed.
func sealedMarker(table string) string { return "sealed:" + table }

// isHidden reports whether a catalog name is a hidden table's.
func isHidden(table string) bool { return strings.HasPrefix(table, HiddenPrefix) }

// hiddenSealed reports whether hidden table table is marked sealed (never
// in a version-1 file, which has no meta table).
func (r *Registry) hiddenSealed(ctx context.Context, c *engine.Conn, table string) (bool, error) {
	if !r.v2.Load() {
		return false, nil
	}
	n, err := c.QueryInt(ctx, `SELECT count(*) FROM `+metaTable+` WHERE name = ?1`, sealedMarker(table))
	return n > 0, err
}

// sealing returns the encryption state when the values of m are sealed:
// an encrypted store and a sealed table. Otherwise nil.
func (m *meta) sealing() *seal.State {
	if !m.sealed.Load() {
		return nil
	}
	return m.env.Seal.Load()
}

// encode returns what a write on c stores for value under key: the value,
// or its sealed form (in c's scratch buffer: the write copies it); and the
// row's checksum (nil for a version-1 table, which has no column for it
// and is never encrypted).
func (m *meta) encode(c *engine.Conn, sh *shape, key, value []byte, hasTTL bool) (stored []byte, sum any) {
	if st := m.sealing(); st != nil && st.Write != nil && sh.t.Crc {
		stored = st.Write.Seal(c.Scratch(len(value)+seal.Overhead), m.name, key, value)
		return stored, withTTL(rowSum(key, stored), hasTTL) ^ st.Write.Flag()
	}
	return nonNil(value), sh.sum(key, value, hasTTL)
}

// authErr is the error of a value that fails authentication.
func authErr(key []byte, why string) error {
	return fmt.Errorf("%w: key %s: %s", engine.ErrAuth, showKey(key), why)
}

// decode checks a data row's stored checksum crc (of SQLite storage class
// kind) against its stored value and returns the value in the clear: the
// stored bytes themselves, or the opened value appended to dst. sum is
// dataSum(key, stored, hasTTL), which the caller has (a scan computes it
// over key and value in one pass). It reads with the encryption state the
// store follows now; decodeOn also reads a snapshot older than that.
//
// adBuf, if not nil, is the caller's buffer for the associated data (a
// scan keeps one: no allocation per row).
func (m *meta) decode(st *engine.Counters, key, stored []byte, sum, crc int64, kind int, strict bool, dst []byte, adBuf *[]byte) (value []byte, opened bool, err error) {
	return m.decodeWith(m.sealing(), m.sealed.Load(), st, key, stored, sum, crc, kind, strict, dst, adBuf)
}

// decodeWith is decode with the encryption state ss (nil: values in the
// clear) and sealed, whether the table's values are sealed when the store
// is encrypted.
func (m *meta) decodeWith(ss *seal.State, sealed bool, st *engine.Counters, key, stored []byte, sum, crc int64, kind int, strict bool, dst []byte, adBuf *[]byte) (value []byte, opened bool, err error) {
	if kind == engine.KindInt {
		switch {
		case ss == nil && crc == sum && sum != 0:
			return stored, false, nil // the common case without encryption
		case ss != nil && ss.Write != nil && crc == sum^ss.Write.Flag():
			return m.open(ss.Write, key, stored, dst, adBuf) // the common case with it
		}
		for g := range uint8(2) {
			if crc != sum^seal.Flag(g) {
				continue
			}
			if ss == nil || ss.KeyOf(g) == nil {
				if !sealed {
					return nil, false, authErr(key, "a sealed value in a table kept in the clear")
				}
				return nil, false, authErr(key, "the value is sealed under a key this store was not opened with")
			}
			return m.open(ss.KeyOf(g), key, stored, dst, adBuf)
		}
	}
	verd, err := checkSumOf(crc, kind, key, sum, "row", strict)
	if err != nil {
		return nil, false, err
	}
	if verd == rowUnverified {
		st.Unverified.Add(1)
		if ss == nil {
			return stored, false, nil
		}
		// Written by another tool: sealed if any key opens it.
		for _, k := range []*seal.Key{ss.Write, ss.KeyOf(0), ss.KeyOf(1)} {
			if k == nil {
				continue
			}
			if v, _, err := m.open(k, key, stored, dst, adBuf); err == nil {
				return v, true, nil
			}
		}
		if ss.Plain {
			return stored, false, nil
		}
		return nil, false, authErr(key, "the value is not sealed under this store's key (written by another tool?)")
	}
	if ss != nil && !ss.Plain {
		return nil, false, authErr(key, "a value in the clear in an encrypted store")
	}
	return stored, false, nil
}

// Snapshots that began before a conversion ended.
//
// The store's encryption state changes when a conversion starts and ends,
// each time after the commit that writes the header recording it, while
// reads that began before may still be decoding the rows of their own
// snapshot: values in the clear, or sealed under a data key the store has
// since retired. Every row says its form (its checksum's flag), so such a
// read fails with ErrAuth under the new state. decodeOn then reads, inside
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

// snapSeal is the encryption state of one read's snapshot, once decodeOn
// has looked it up (known).
type snapSeal struct {
	known  bool
	ss     *seal.State
	sealed bool
}

// snapshotSeal reads, on c inside its transaction, the encryption header
// and the sealed marker of m's table that c's snapshot holds, and returns
// the state the store followed with that header (nil: values in the
// clear) and whether the table's values are sealed; ok is false when it
// cannot tell (a header this process never followed, or a failed read).
func (m *meta) snapshotSeal(ctx context.Context, c *engine.Conn) (ss *seal.State, sealed, ok bool) {
	rows, err := c.Query(ctx, `SELECT name, value FROM `+metaTable+` WHERE name IN (?1, ?2)`, sealHeaderRow, sealedMarker(m.name))
	if err != nil {
		return nil, false, false
	}
	var h []byte
	sealed = !isHidden(m.name)
	for rows.Next() {
		if string(rows.RawBytes(0)) == sealHeaderRow {
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
	if ss = m.env.past.get(h); ss == nil {
		return nil, false, false
	}
	return ss, sealed, true
}

// snapshotState returns the encryption state of the snapshot of c's
// transaction: the state the store followed with the header it holds, or,
// for a header this process never followed (or one it cannot read), the
// one it follows now.
func (r *Registry) snapshotState(ctx context.Context, c *engine.Conn) *seal.State {
	now := r.env.Seal.Load()
	if !r.v2.Load() {
		return now // a version-1 file is never encrypted
	}
	h, _, err := readSealHeader(ctx, c)
	switch {
	case err != nil:
		return now
	case h == nil:
		return nil
	}
	if ss := r.env.past.get(h); ss != nil {
		return ss
	}
	return now
}

// decodeOn is decode for a read on c: with the state snap knows, or else
// with the state the store follows now, and, when that fails with
// ErrAuth, with the state of c's snapshot (see above), which it records in
// snap (nil: nothing to record it in).
func (m *meta) decodeOn(ctx context.Context, c *engine.Conn, snap *snapSeal, st *engine.Counters, key, stored []byte, sum, crc int64, kind int, strict bool, dst []byte, adBuf *[]byte) ([]byte, bool, error) {
	ss, sealed := m.sealing(), m.sealed.Load()
	if snap != nil && snap.known {
		ss, sealed = snap.ss, snap.sealed
	}
	v, opened, err := m.decodeWith(ss, sealed, st, key, stored, sum, crc, kind, strict, dst, adBuf)
	if err == nil || c == nil || (snap != nil && snap.known) || !errors.Is(err, engine.ErrAuth) {
		return v, opened, err
	}
	ss2, sealed2, ok := m.snapshotSeal(ctx, c)
	if !ok {
		return v, opened, err
	}
	if snap != nil {
		*snap = snapSeal{known: true, ss: ss2, sealed: sealed2}
	}
	if ss2 == ss && sealed2 == sealed {
		return v, opened, err
	}
	var scrap engine.Counters // the first attempt counted the row already
	return m.decodeWith(ss2, sealed2, &scrap, key, stored, sum, crc, kind, strict, dst, adBuf)
}

// open opens a sealed value with k, appending it to dst.
func (m *meta) open(k *seal.Key, key, stored, dst []byte, adBuf *[]byte) ([]byte, bool, error) {
	var v []byte
	var err error
	if adBuf != nil {
		*adBuf = k.AD((*adBuf)[:0], m.name, key)
		v, err = k.OpenAD(dst, *adBuf, stored)
	} else {
		v, err = k.Open(dst, m.name, key, stored)
	}
	if err != nil {
		return nil, false, authErr(key, "the sealed value fails authentication (changed, or copied from another key or store)")
	}
	if v == nil {
		v = []byte{}
	}
	return v, true, nil
}

package rowcodec

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/internal/seal"
)

// The seal step of the row. In a store without encryption a row is its
// checksum alone; in an encrypted store Encode seals the values of sealed
// tables (every column family, and the hidden tables made sealed), bound
// to the table and key, and Open opens them.
//
// A row says how its value is stored through its checksum, which covers
// the stored bytes: the plain CRC for a value in the clear, the CRC with
// seal.Flag(gen) mixed in for a value sealed under the data key of
// generation gen. So a conversion can stop anywhere and resume, and a
// store never reads a sealed value as one in the clear, or the reverse:
// the wrong form is an authentication error, not a value.

// AuthErr is the error of a value that fails authentication.
func AuthErr(key []byte, why string) error {
	return fmt.Errorf("%w: key %s: %s", engine.ErrAuth, ShowKey(key), why)
}

// Open checks the data row r against its stored checksum crc (of SQLite
// storage class kind) and returns the value in the clear: the stored bytes
// themselves, or the opened value appended to dst (opened). sum is
// r.Sum(), which the caller has. A value that fails authentication under
// cd.Seal is opened again with the state of the read's snapshot when it
// differs (see Snapshot).
func (cd *Codec) Open(r *Row, sum, crc int64, kind int, dst []byte, adBuf *[]byte) (value []byte, opened bool, err error) {
	ss, sealed := cd.Seal, cd.Sealed
	known := cd.Snap != nil && cd.Snap.Known
	if known {
		ss, sealed = cd.Snap.ss, cd.Snap.sealed
	}
	v, opened, err := cd.open(ss, sealed, cd.Stats, r, sum, crc, kind, dst, adBuf)
	if err == nil || cd.Conn == nil || known || !errors.Is(err, engine.ErrAuth) {
		return v, opened, err
	}
	ss2, sealed2, ok := cd.snapshotSeal()
	if !ok {
		return v, opened, err
	}
	if cd.Snap != nil {
		*cd.Snap = Snapshot{Known: true, ss: ss2, sealed: sealed2}
	}
	if ss2 == ss && sealed2 == sealed {
		return v, opened, err
	}
	var scrap engine.Counters // the first attempt counted the row already
	return cd.open(ss2, sealed2, &scrap, r, sum, crc, kind, dst, adBuf)
}

// open is Open with the encryption state ss (nil: values in the clear)
// and sealed, whether the table's values are sealed when the store is
// encrypted.
func (cd *Codec) open(ss *seal.State, sealed bool, st *engine.Counters, r *Row, sum, crc int64, kind int, dst []byte, adBuf *[]byte) (value []byte, opened bool, err error) {
	key, stored, table := r.Key, r.Stored, cd.Objects.Data
	if kind == engine.KindInt {
		switch {
		case ss == nil && crc == sum && sum != 0:
			return stored, false, nil // the common case without encryption
		case ss != nil && ss.Write != nil && crc == sum^ss.Write.Flag():
			return openWith(ss.Write, table, key, stored, dst, adBuf) // the common case with it
		}
		for g := range uint8(2) {
			if crc != sum^seal.Flag(g) {
				continue
			}
			if ss == nil || ss.KeyOf(g) == nil {
				if !sealed {
					return nil, false, AuthErr(key, "a sealed value in a table kept in the clear")
				}
				return nil, false, AuthErr(key, "the value is sealed under a key this store was not opened with")
			}
			return openWith(ss.KeyOf(g), table, key, stored, dst, adBuf)
		}
	}
	verd, err := CheckSumOf(crc, kind, key, sum, "row", cd.Objects.V2)
	if err != nil {
		return nil, false, err
	}
	if verd == Unverified {
		st.Unverified.Add(1)
		if ss == nil {
			return stored, false, nil
		}
		// Written by another tool: sealed if any key opens it.
		for _, k := range []*seal.Key{ss.Write, ss.KeyOf(0), ss.KeyOf(1)} {
			if k == nil {
				continue
			}
			if v, _, err := openWith(k, table, key, stored, dst, adBuf); err == nil {
				return v, true, nil
			}
		}
		if ss.Plain {
			return stored, false, nil
		}
		return nil, false, AuthErr(key, "the value is not sealed under this store's key (written by another tool?)")
	}
	if ss != nil && !ss.Plain {
		return nil, false, AuthErr(key, "a value in the clear in an encrypted store")
	}
	return stored, false, nil
}

// openWith opens a sealed value of table with k, appending it to dst.
func openWith(k *seal.Key, table string, key, stored, dst []byte, adBuf *[]byte) ([]byte, bool, error) {
	var v []byte
	var err error
	if adBuf != nil {
		*adBuf = k.AD((*adBuf)[:0], table, key)
		v, err = k.OpenAD(dst, *adBuf, stored)
	} else {
		v, err = k.Open(dst, table, key, stored)
	}
	if err != nil {
		return nil, false, AuthErr(key, "the sealed value fails authentication (changed, or copied from another key or store)")
	}
	if v == nil {
		v = []byte{}
	}
	return v, true, nil
}

// InForm reports whether a row whose stored checksum is crc (of storage
// class kind) is already in the form Encode writes: sealed under the
// write key when the store seals, in the clear otherwise.
func (cd *Codec) InForm(r *Row, crc int64, kind int) bool {
	if kind != engine.KindInt {
		return false
	}
	sum := r.Sum()
	if ss := cd.Seal; ss != nil && ss.Write != nil {
		return crc == sum^ss.Write.Flag()
	}
	return crc == sum
}

// Snapshots that began before a conversion ended.
//
// The store's encryption state changes when a conversion starts and ends,
// each time after the commit that writes the header recording it, while
// reads that began before may still be decoding the rows of their own
// snapshot: values in the clear, or sealed under a data key the store has
// since retired. Every row says its form (its checksum's flag), so such a
// read fails with ErrAuth under the new state. Open then reads, inside
// the same read transaction, the encryption header (and, for a hidden
// table, its sealed marker) that the read's snapshot holds, and opens
// again with the state the store followed with that header: every header
// this process has followed is kept with its state (History). A row that
// fails under its own snapshot's state too is reported as it was.
//
// The first attempt uses the current state, which during a conversion
// reads both forms and otherwise equals the state of every snapshot begun
// since the last change: a read pays for the look-up only in the rare
// case, and a row is accepted only in a form its snapshot or the store
// accepts now.

// History maps each encryption header a store has followed, as stored in
// the file, to the state it was followed with.
type History struct {
	mu       sync.RWMutex
	byHeader map[string]*seal.State
}

// Add records that the store followed st with header.
func (h *History) Add(header []byte, st *seal.State) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byHeader == nil {
		h.byHeader = map[string]*seal.State{}
	}
	h.byHeader[string(header)] = st
}

// Get returns the state the store followed with header, or nil.
func (h *History) Get(header []byte) *seal.State {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.byHeader[string(header)]
}

// Snapshot is the encryption state of one read's snapshot, once Open has
// looked it up (Known).
type Snapshot struct {
	Known  bool
	ss     *seal.State
	sealed bool
}

// State returns the encryption state the snapshot's rows are read with
// (nil: in the clear); only meaningful when Known.
func (s *Snapshot) State() *seal.State {
	if !s.sealed {
		return nil
	}
	return s.ss
}

// snapshotSeal reads, on cd.Conn inside its transaction, the encryption
// header and the sealed marker of the table that its snapshot holds, and
// returns the state the store followed with that header (nil: values in
// the clear) and whether the table's values are sealed; ok is false when
// it cannot tell (a header this process never followed, or a failed read).
func (cd *Codec) snapshotSeal() (ss *seal.State, sealed, ok bool) {
	name := cd.Objects.Data
	rows, err := cd.Conn.Query(cd.Ctx, `SELECT name, value FROM `+layout.Quote(layout.MetaTable)+` WHERE name IN (?1, ?2)`, layout.SealHeaderRow, layout.SealedMarker(name))
	if err != nil {
		return nil, false, false
	}
	var h []byte
	sealed = !layout.IsHidden(name)
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
	if cd.Past == nil {
		return nil, false, false
	}
	if ss = cd.Past.Get(h); ss == nil {
		return nil, false, false
	}
	return ss, sealed, true
}

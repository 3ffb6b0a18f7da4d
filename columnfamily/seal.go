package columnfamily

import (
	"context"
	"fmt"
	"strings"

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
// over key and value in one pass).
//
// adBuf, if not nil, is the caller's buffer for the associated data (a
// scan keeps one: no allocation per row).
func (m *meta) decode(st *engine.Counters, key, stored []byte, sum, crc int64, kind int, strict bool, dst []byte, adBuf *[]byte) (value []byte, opened bool, err error) {
	ss := m.sealing()
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
				if !m.sealed.Load() {
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

package rowcodec

import (
	"fmt"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/seal"
)

// The value step of the row codec. Every write, through SQL or below it,
// stores what family.Family.Encode returns; every read gives Decode what it
// found. In a store without encryption they are the checksum alone; in an
// encrypted store they seal and open the values of sealed tables (every
// column family, and the hidden tables made sealed), bound to the table and
// key.
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

// Decode checks a data row of table (its catalog name) against its stored
// checksum crc (of SQLite storage class kind) and returns the value in the
// clear: the stored bytes themselves, or the opened value appended to dst
// (opened). sum is DataSum(key, stored, hasTTL), which the caller has (a
// scan computes it over key and value in one pass). ss is the encryption
// state to read with (nil: values in the clear), and sealed whether the
// table's values are sealed when the store is encrypted. strict is set for
// a format-2 table, where a missing checksum is damage.
//
// adBuf, if not nil, is the caller's buffer for the associated data (a
// scan keeps one: no allocation per row).
func Decode(ss *seal.State, sealed bool, table string, st *engine.Counters, key, stored []byte, sum, crc int64, kind int, strict bool, dst []byte, adBuf *[]byte) (value []byte, opened bool, err error) {
	if kind == engine.KindInt {
		switch {
		case ss == nil && crc == sum && sum != 0:
			return stored, false, nil // the common case without encryption
		case ss != nil && ss.Write != nil && crc == sum^ss.Write.Flag():
			return open(ss.Write, table, key, stored, dst, adBuf) // the common case with it
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
			return open(ss.KeyOf(g), table, key, stored, dst, adBuf)
		}
	}
	verd, err := CheckSumOf(crc, kind, key, sum, "row", strict)
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
			if v, _, err := open(k, table, key, stored, dst, adBuf); err == nil {
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

// open opens a sealed value of table with k, appending it to dst.
func open(k *seal.Key, table string, key, stored, dst []byte, adBuf *[]byte) ([]byte, bool, error) {
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

package seal

import (
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"

	"golang.org/x/crypto/chacha20poly1305"
)

// Sizes of what sealing adds to a value.
const (
	// KeySize is the size of a data key and of a raw key given by the user.
	KeySize = chacha20poly1305.KeySize
	// NonceSize is the size of the nonce a sealed value starts with.
	NonceSize = chacha20poly1305.NonceSizeX
	// Overhead is what sealing adds to a value: the nonce before it and the
	// Poly1305 tag after it.
	Overhead = NonceSize + chacha20poly1305.Overhead
)

// ErrOpen is the error of a sealed value that fails authentication: the
// wrong key, or a value that was changed or copied from elsewhere.
var ErrOpen = errors.New("authentication failed")

// flags are mixed (XOR) into the checksum of a sealed row, one per key
// generation parity, so that a row says how its value is stored: in the
// clear (no flag), or sealed under the data key of an even or an odd
// generation. A conversion reads both forms, and a store reads a row of
// the other form as an authentication failure rather than as a value.
// Bit 31 is clear in both, so a checksum stays a signed 32-bit integer.
var flags = [2]int64{0x2c1b3c6d, 0x6a09e667}

// Flag returns the checksum flag of generation parity gen.
func Flag(gen uint8) int64 { return flags[gen&1] }

// Key seals and opens values under one data key. It is safe for
// concurrent use.
type Key struct {
	aead  cipher.AEAD
	store [16]byte
	gen   uint8
	// Nonces are a random prefix, drawn once per Key, and a counter: unique
	// without a call to the system's random source per value.
	prefix [16]byte
	ctr    atomic.Uint64
	adBufs sync.Pool
}

func newKey(dek []byte, store [16]byte, gen uint8) (*Key, error) {
	aead, err := chacha20poly1305.NewX(dek)
	if err != nil {
		return nil, err
	}
	k := &Key{aead: aead, store: store, gen: gen & 1}
	if _, err := rand.Read(k.prefix[:]); err != nil {
		return nil, err
	}
	k.adBufs.New = func() any { b := make([]byte, 0, 128); return &b }
	return k, nil
}

// Flag returns the checksum flag of the rows this key seals.
func (k *Key) Flag() int64 { return flags[k.gen] }

// Gen returns the generation parity of the key.
func (k *Key) Gen() uint8 { return k.gen }

// ad builds the associated data of a value: the store's identifier, the
// table's name (length first) and the key. A value opens only where it was
// sealed.
func (k *Key) ad(b []byte, table string, key []byte) []byte {
	b = append(b, k.store[:]...)
	b = binary.AppendUvarint(b, uint64(len(table)))
	b = append(b, table...)
	return append(b, key...)
}

// Seal appends to dst the sealed form of value under key in table:
// nonce ‖ ciphertext ‖ tag.
func (k *Key) Seal(dst []byte, table string, key, value []byte) []byte {
	// The nonce is written in place, where the sealed value starts.
	dst = binary.BigEndian.AppendUint64(append(dst, k.prefix[:]...), k.ctr.Add(1))
	nonce := dst[len(dst)-NonceSize:]
	bp := k.adBufs.Get().(*[]byte)
	ad := k.ad((*bp)[:0], table, key)
	dst = k.aead.Seal(dst, nonce, value, ad)
	*bp = ad[:0]
	k.adBufs.Put(bp)
	return dst
}

// Open appends to dst the value sealed in sealed under key in table, or
// fails with ErrOpen.
func (k *Key) Open(dst []byte, table string, key, sealed []byte) ([]byte, error) {
	bp := k.adBufs.Get().(*[]byte)
	ad := k.ad((*bp)[:0], table, key)
	out, err := k.OpenAD(dst, ad, sealed)
	*bp = ad[:0]
	k.adBufs.Put(bp)
	return out, err
}

// AD appends to b the associated data of a value under key in table, for
// OpenAD: a caller that opens many values (a scan) keeps one buffer for
// it.
func (k *Key) AD(b []byte, table string, key []byte) []byte { return k.ad(b, table, key) }

// OpenAD is Open with the associated data ad that AD built.
func (k *Key) OpenAD(dst, ad, sealed []byte) ([]byte, error) {
	if len(sealed) < Overhead {
		return nil, ErrOpen
	}
	out, err := k.aead.Open(dst, sealed[:NonceSize], sealed[NonceSize:], ad)
	if err != nil {
		return nil, ErrOpen
	}
	return out, nil
}

// State is what a store's row codec follows: the key writes seal with, and
// the forms reads accept. A nil *State is a store without encryption.
type State struct {
	// Write seals every write; nil writes values in the clear.
	Write *Key
	// Plain: rows in the clear are accepted in sealed tables (a conversion
	// to or from the clear is under way).
	Plain bool
	keys  [2]*Key // by generation parity
}

// KeyOf returns the key of generation parity gen, or nil if the store has
// none.
func (s *State) KeyOf(gen uint8) *Key { return s.keys[gen&1] }

package seal

import (
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"

	"golang.org/x/crypto/chacha20"
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
//
// A value is XChaCha20-Poly1305 under the data key: HChaCha20 derives a
// subkey from the key and the nonce's first 16 bytes, and ChaCha20-Poly1305
// under that subkey seals with the nonce's last 8 bytes (after 4 zero
// bytes). Every value a Key seals shares its nonce prefix, and so its
// subkey: the Key derives it once (chacha20.HChaCha20) and seals with
// chacha20poly1305.New under it, which is byte for byte what
// chacha20poly1305.NewX gives (TestSealMatchesXChaCha20Poly1305), without
// an HChaCha20 per value. Values sealed by other Keys of the same data key
// (earlier opens of the store) are opened with the subkey of their own
// prefix, kept in a small cache.
type Key struct {
	dek   [KeySize]byte
	store [16]byte
	gen   uint8
	// Nonces are a random prefix, drawn once per Key, and a counter: unique
	// without a call to the system's random source per value.
	prefix [16]byte
	ctr    atomic.Uint64
	own    cipher.AEAD // ChaCha20-Poly1305 under the subkey of prefix
	// subs caches the ciphers of other prefixes, by their first byte (a
	// random one).
	subs   [256]atomic.Pointer[subkey]
	adBufs sync.Pool
}

// subkey is the cipher of one nonce prefix.
type subkey struct {
	prefix [16]byte
	aead   cipher.AEAD
}

func newKey(dek []byte, store [16]byte, gen uint8) (*Key, error) {
	if len(dek) != KeySize {
		return nil, errors.New("a data key must be 32 bytes")
	}
	k := &Key{store: store, gen: gen & 1}
	copy(k.dek[:], dek)
	if _, err := rand.Read(k.prefix[:]); err != nil {
		return nil, err
	}
	own, err := k.derive(k.prefix[:])
	if err != nil {
		return nil, err
	}
	k.own = own
	k.adBufs.New = func() any { b := make([]byte, 0, 128); return &b }
	return k, nil
}

// derive returns ChaCha20-Poly1305 under the subkey of nonce prefix p.
func (k *Key) derive(p []byte) (cipher.AEAD, error) {
	sub, err := chacha20.HChaCha20(k.dek[:], p)
	if err != nil {
		return nil, err
	}
	return chacha20poly1305.New(sub)
}

// cipherOf returns the cipher of nonce prefix p (16 bytes).
func (k *Key) cipherOf(p []byte) (cipher.AEAD, error) {
	if string(p) == string(k.prefix[:]) {
		return k.own, nil
	}
	slot := &k.subs[p[0]]
	if e := slot.Load(); e != nil && string(e.prefix[:]) == string(p) {
		return e.aead, nil
	}
	aead, err := k.derive(p)
	if err != nil {
		return nil, err
	}
	e := &subkey{aead: aead}
	copy(e.prefix[:], p)
	slot.Store(e)
	return aead, nil
}

// Flag returns the checksum flag of the rows this key seals.
func (k *Key) Flag() int64 { return flags[k.gen] }

// Gen returns the generation parity of the key.
func (k *Key) Gen() uint8 { return k.gen }

// nonceRoom is the room a buffer from AD keeps before the associated data,
// for the 12-byte ChaCha20-Poly1305 nonce of the value being opened.
const nonceRoom = chacha20poly1305.NonceSize

// ad appends to b the room of a nonce, then the associated data of a
// value: the store's identifier, the table's name (length first) and the
// key. A value opens only where it was sealed.
func (k *Key) ad(b []byte, table string, key []byte) []byte {
	b = append(b, make([]byte, nonceRoom)...)
	b = append(b, k.store[:]...)
	b = binary.AppendUvarint(b, uint64(len(table)))
	b = append(b, table...)
	return append(b, key...)
}

// Seal appends to dst the sealed form of value under key in table:
// nonce ‖ ciphertext ‖ tag.
func (k *Key) Seal(dst []byte, table string, key, value []byte) []byte {
	n := k.ctr.Add(1)
	// The XChaCha20 nonce is written in place, where the sealed value
	// starts.
	dst = binary.BigEndian.AppendUint64(append(dst, k.prefix[:]...), n)
	bp := k.adBufs.Get().(*[]byte)
	ad := k.ad((*bp)[:0], table, key)
	nonce := ad[:nonceRoom]
	clear(nonce[:4])
	binary.BigEndian.PutUint64(nonce[4:], n)
	dst = k.own.Seal(dst, nonce, value, ad[nonceRoom:])
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

// AD appends to b what OpenAD needs of a value under key in table: room
// for its nonce, then its associated data. A caller that opens many values
// (a scan) keeps one buffer for it.
func (k *Key) AD(b []byte, table string, key []byte) []byte { return k.ad(b, table, key) }

// OpenAD is Open with the buffer ad that AD built (it writes the value's
// nonce into the room AD left).
func (k *Key) OpenAD(dst, ad, sealed []byte) ([]byte, error) {
	if len(sealed) < Overhead || len(ad) < nonceRoom {
		return nil, ErrOpen
	}
	aead, err := k.cipherOf(sealed[:16])
	if err != nil {
		return nil, ErrOpen
	}
	nonce := ad[:nonceRoom]
	clear(nonce[:4])
	copy(nonce[4:], sealed[16:NonceSize])
	out, err := aead.Open(dst, nonce, sealed[NonceSize:], ad[nonceRoom:])
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

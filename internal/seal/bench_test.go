package seal

import (
	"bytes"
	"testing"

	"golang.org/x/crypto/chacha20poly1305"
)

// BenchmarkOpen100 opens a sealed 100-byte value: the floor of what
// encryption adds to every read.
func BenchmarkOpen100(b *testing.B) {
	_, k, key, _, s := benchSealed(100)
	buf := make([]byte, 0, 200)
	for b.Loop() {
		if _, err := k.Open(buf[:0], "default", key, s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSeal100 seals a 100-byte value: the floor of what encryption
// adds to every write.
func BenchmarkSeal100(b *testing.B) {
	_, k, key, v, _ := benchSealed(100)
	buf := make([]byte, 0, 200)
	for b.Loop() {
		k.Seal(buf[:0], "default", key, v)
	}
}

// BenchmarkOpen100NewX is BenchmarkOpen100 the way the Key opened values
// before it kept each nonce prefix's subkey: chacha20poly1305.NewX, which
// runs HChaCha20 for every value.
func BenchmarkOpen100NewX(b *testing.B) {
	kr, k, key, _, s := benchSealed(100)
	x, _ := chacha20poly1305.NewX(kr.cur)
	ad := k.AD(nil, "default", key)[nonceRoom:]
	buf := make([]byte, 0, 200)
	for b.Loop() {
		if _, err := x.Open(buf[:0], s[:NonceSize], s[NonceSize:], ad); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpen1K opens a sealed 1 KiB value.
func BenchmarkOpen1K(b *testing.B) {
	_, k, key, _, s := benchSealed(1024)
	ad := k.AD(nil, "default", key)
	buf := make([]byte, 0, 1100)
	for b.Loop() {
		if _, err := k.OpenAD(buf[:0], ad, s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAD builds the associated data of a value (with the room of its
// nonce): what every open and seal adds before the cipher.
func BenchmarkAD(b *testing.B) {
	_, k, key, _, _ := benchSealed(0)
	buf := make([]byte, 0, 128)
	for b.Loop() {
		buf = k.AD(buf[:0], "default", key)
	}
}

// benchSealed returns the inputs of the benchmarks: a new key ring, its
// write key, a 16-byte key, a value of n bytes and that value sealed for
// the key in the default column family.
func benchSealed(n int) (kr *Keyring, k *Key, key, v, sealed []byte) {
	kr, _ = Create(Secret{Key: bytes.Repeat([]byte{1}, KeySize)})
	st, _ := kr.State()
	k = st.Write
	key = []byte("0123456789abcdef")
	v = bytes.Repeat([]byte("v"), n)
	return kr, k, key, v, k.Seal(nil, "default", key, v)
}

package seal

import (
	"bytes"
	"testing"
)

// BenchmarkOpen100 opens a sealed 100-byte value: the floor of what
// encryption adds to every read.
func BenchmarkOpen100(b *testing.B) {
	kr, _ := Create(Secret{Key: bytes.Repeat([]byte{1}, KeySize)})
	st, _ := kr.State()
	k := st.Write
	v := bytes.Repeat([]byte("v"), 100)
	key := []byte("0123456789abcdef")
	s := k.Seal(nil, "default", key, v)
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
	kr, _ := Create(Secret{Key: bytes.Repeat([]byte{1}, KeySize)})
	st, _ := kr.State()
	k := st.Write
	v := bytes.Repeat([]byte("v"), 100)
	key := []byte("0123456789abcdef")
	buf := make([]byte, 0, 200)
	for b.Loop() {
		k.Seal(buf[:0], "default", key, v)
	}
}

package rowcodec

import (
	"bytes"
	"testing"

	"github.com/snkv-go/snkv/internal/seal"
)

// BenchmarkRowSumSealed is the checksum a scan computes over a row's key
// and stored value, in the clear and sealed (seal.Overhead bytes longer),
// for values of 100 bytes and 1 KiB: what the CRC adds to reading a sealed
// row.
func BenchmarkRowSumSealed(b *testing.B) {
	key := bytes.Repeat([]byte("k"), 16)
	for _, size := range []struct {
		name string
		n    int
	}{{"100", 100}, {"1K", 1024}} {
		for _, side := range []struct {
			name  string
			extra int
		}{{"clear", 0}, {"sealed", seal.Overhead}} {
			kv := append(bytes.Clone(key), bytes.Repeat([]byte("v"), size.n+side.extra)...)
			b.Run(size.name+"/"+side.name, func(b *testing.B) {
				for b.Loop() {
					_ = JoinedSum(len(key), kv)
				}
			})
		}
	}
}

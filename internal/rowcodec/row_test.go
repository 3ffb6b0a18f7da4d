package rowcodec

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/stretchr/testify/require"
)

// TestRowSumIsCRC32C checks RowSum against hash/crc32 over the documented
// byte string: the key's length (4 bytes, big-endian), the key, the rest.
func TestRowSumIsCRC32C(t *testing.T) {
	for _, c := range []struct{ key, rest string }{{"k", ""}, {"user:alice", "{\"name\":\"Alice\"}"}, {string(make([]byte, 300)), "v"}} {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(c.key)))
		b = append(append(b, c.key...), c.rest...)
		want := int64(int32(crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))))
		require.Equal(t, want, RowSum([]byte(c.key), []byte(c.rest)))
		// The scan's one-pass form over the key and the rest side by side.
		require.Equal(t, want, JoinedSum(len(c.key), []byte(c.key+c.rest)))
	}
	// The length's checksum from the table and past it.
	for _, n := range []int{0, 1, 16, 255, 256, 65536} {
		require.Equal(t, crc32.Checksum(binary.BigEndian.AppendUint32(nil, uint32(n)), crc32.MakeTable(crc32.Castagnoli)), lenSum(n))
	}
	require.NotEqual(t, DataSum([]byte("k"), []byte("v"), false), DataSum([]byte("k"), []byte("v"), true))
}

// BenchmarkRowSum is the checksum of a 16-byte key and a 100-byte value
// (row: apart, as a point read has them; joined: side by side, as a scan
// copies them), and for comparison of a 4 KiB page (what a page checksum
// would cost per page read or written).
func BenchmarkRowSum(b *testing.B) {
	key, value, page := make([]byte, 16), make([]byte, 100), make([]byte, 4096)
	b.Run("row", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			RowSum(key, value)
		}
	})
	b.Run("joined", func(b *testing.B) {
		kv := append(append([]byte(nil), key...), value...)
		b.ReportAllocs()
		for b.Loop() {
			JoinedSum(len(key), kv)
		}
	})
	b.Run("page4k", func(b *testing.B) {
		for b.Loop() {
			crc32.Update(0, castagnoli, page)
		}
	})
}

// The limits of a key and a value.
func TestCheckKeyAndValue(t *testing.T) {
	require.ErrorIs(t, CheckKey(nil), engine.ErrInvalidKey)
	require.ErrorIs(t, CheckKey([]byte{}), engine.ErrInvalidKey)
	require.NoError(t, CheckKey(make([]byte, layout.MaxKeySize)))
	require.ErrorIs(t, CheckKey(make([]byte, layout.MaxKeySize+1)), engine.ErrKeyTooLarge)
	require.NoError(t, CheckKV([]byte("k"), []byte("1234"), 4))
	require.ErrorIs(t, CheckKV([]byte("k"), []byte("12345"), 4), engine.ErrValueTooLarge)
	require.ErrorIs(t, CheckKV(nil, []byte("1"), 4), engine.ErrInvalidKey)
	require.Equal(t, []byte{}, NonNil(nil))
}

// A codec's checksum follows the table's layout: none in a version-1
// table, the data row's with the TTL flag otherwise; the row's own Sum is
// the same checksum, in one pass when key and value lie side by side.
func TestCodecEncodeSums(t *testing.T) {
	k, v := []byte("k"), []byte("v")
	v1 := layout.For("t", false, false)
	stored, sum := (&Codec{Objects: &v1}).Encode(nil, k, nil, false)
	require.Nil(t, sum)
	require.Equal(t, []byte{}, stored, "a nil value is stored as an empty one")
	for _, o := range []layout.Objects{layout.For("t", true, false), layout.For("t", true, true)} {
		cd := &Codec{Objects: &o}
		for _, ttl := range []bool{false, true} {
			stored, sum := cd.Encode(nil, k, v, ttl)
			require.Equal(t, v, stored)
			require.Equal(t, DataSum(k, v, ttl), sum)
			r := Row{Key: k, Stored: v, Exp: -1}
			if ttl {
				r.Exp = 5
			}
			require.Equal(t, sum, r.Sum())
			kv := []byte("kv")
			r.Key, r.Stored = kv[:1], kv[1:]
			got, ok := r.joined()
			require.True(t, ok)
			require.Equal(t, kv, got)
			require.Equal(t, sum, r.Sum())
			r.Key = kv[:1:1]
			_, ok = r.joined()
			require.False(t, ok, "not within the key's capacity")
			require.Equal(t, sum, r.Sum())
		}
	}
}

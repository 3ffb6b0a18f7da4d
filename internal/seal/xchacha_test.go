package seal

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	mrand "math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20poly1305"
)

// Key seals with ChaCha20-Poly1305 under a subkey it derives once per nonce
// prefix: every value it seals must be byte for byte what
// chacha20poly1305.NewX gives for the same key, nonce, value and associated
// data, and it must open exactly what NewX opens, under any prefix (values
// sealed by other Keys of the data key: earlier opens of the store).
func TestSealMatchesXChaCha20Poly1305(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(7, 29))
	for round := range 40 {
		dek := make([]byte, KeySize)
		_, _ = rand.Read(dek)
		var store [16]byte
		_, _ = rand.Read(store[:])
		k, err := newKey(dek, store, uint8(round))
		require.NoError(t, err)
		x, err := chacha20poly1305.NewX(dek)
		require.NoError(t, err)
		for i := range 50 {
			table := string(bytes.Repeat([]byte{'t'}, rng.IntN(40)))
			key := make([]byte, 1+rng.IntN(64))
			_, _ = rand.Read(key)
			value := make([]byte, []int{0, 1, 15, 16, 17, 63, 64, 65, 100, 255, 256, 1024, 4097}[i%13]+rng.IntN(3))
			_, _ = rand.Read(value)
			ad := k.ad(nil, table, key)[nonceRoom:]

			sealed := k.Seal(nil, table, key, value)
			require.Len(t, sealed, len(value)+Overhead)
			want := x.Seal(bytes.Clone(sealed[:NonceSize]), sealed[:NonceSize], value, ad)
			require.Equal(t, want, sealed, "round %d value %d: not NewX's output", round, i)
			got, err := k.Open(nil, table, key, sealed)
			require.NoError(t, err)
			require.Equal(t, value, nonNilBytes(got))

			// A value NewX sealed under another prefix (another open's Key).
			nonce := make([]byte, NonceSize)
			_, _ = rand.Read(nonce)
			if i%7 == 0 {
				copy(nonce, sealed[:16]) // the same first byte, another prefix: the cache slot is shared
				nonce[15] ^= 1
			}
			foreign := x.Seal(bytes.Clone(nonce), nonce, value, ad)
			got, err = k.Open(nil, table, key, foreign)
			require.NoError(t, err, "a value NewX sealed under another prefix")
			require.Equal(t, value, nonNilBytes(got))
			got, err = k.Open(nil, table, key, foreign) // from the cache
			require.NoError(t, err)
			require.Equal(t, value, nonNilBytes(got))

			// What NewX refuses, Open refuses: any flipped bit.
			for _, v := range [][]byte{sealed, foreign} {
				bad := bytes.Clone(v)
				bit := rng.IntN(len(bad) * 8)
				bad[bit/8] ^= 1 << (bit % 8)
				_, xerr := x.Open(nil, bad[:NonceSize], bad[NonceSize:], ad)
				require.Error(t, xerr)
				_, err := k.Open(nil, table, key, bad)
				require.ErrorIs(t, err, ErrOpen)
			}
		}
		// The counter moves on for every seal: the nonces never repeat.
		a, b := k.Seal(nil, "t", []byte("k"), nil), k.Seal(nil, "t", []byte("k"), nil)
		require.Equal(t, binary.BigEndian.Uint64(a[16:24])+1, binary.BigEndian.Uint64(b[16:24]))
	}
}

func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

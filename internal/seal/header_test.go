package seal

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every single-bit change of a header is refused as damaged before any key
// is derived with the cost it records: a flipped bit in the memory field
// must not make an open allocate a gigabyte first.
func TestHeaderDamageCaughtBeforeDeriving(t *testing.T) {
	a := Secret{Password: []byte("alpha"), KDF: LightKDF}
	kr, err := Create(a)
	require.NoError(t, err)
	h, err := kr.Header()
	require.NoError(t, err)
	before := derivations.Load()
	for i := range h {
		for bit := range 8 {
			bad := bytes.Clone(h)
			bad[i] ^= 1 << bit
			_, err := Unlock(bad, a, OpenLimit)
			require.ErrorIs(t, err, ErrHeader, "flip of bit %d of byte %d", bit, i)
		}
	}
	require.Equal(t, before, derivations.Load(), "a damaged header was derived with")
	_, err = Unlock(h, a, OpenLimit)
	require.NoError(t, err)
	require.Equal(t, before+1, derivations.Load())
}

// A cost above the open limit is refused before deriving unless the open
// allows it; a new secret cannot be given one.
func TestUnlockCostLimit(t *testing.T) {
	a := Secret{Password: []byte("alpha"), KDF: cheap}
	over := KDF{Time: OpenLimit.Time + 1, MemoryKiB: 64, Threads: 1}
	_, err := Create(Secret{Password: []byte("alpha"), KDF: over})
	require.Error(t, err, "a new secret's cost is at most OpenLimit")
	require.NoError(t, over.Validate(), "within the absolute bounds")

	kr, err := Create(a)
	require.NoError(t, err)
	// As an older version could have written it.
	kr.slots[0].kdf = over
	kr.slots[0].kek = kr.slots[0].derive(Secret{Password: []byte("alpha"), KDF: over})
	h, err := kr.Header()
	require.NoError(t, err)
	before := derivations.Load()
	_, err = Unlock(h, a, OpenLimit)
	require.ErrorIs(t, err, ErrCost)
	require.Equal(t, before, derivations.Load())
	_, err = Unlock(h, a, OpenLimit.Max(over))
	require.NoError(t, err)
	_, err = Unlock(h, Secret{Key: bytes.Repeat([]byte{1}, KeySize)}, OpenLimit)
	require.ErrorIs(t, err, ErrOpen, "a key opens no password slot: nothing derived, nothing too costly")
}

// Headers of version 1 (no checksum), as stores encrypted before it was
// added hold them, still open; the next header written is version 2.
func TestHeaderVersion1StillOpens(t *testing.T) {
	a := Secret{Password: []byte("alpha"), KDF: cheap}
	kr, err := Create(a)
	require.NoError(t, err)
	_, err = kr.Finish()
	require.NoError(t, err)
	v1, err := kr.encode(headerV1)
	require.NoError(t, err)
	require.Equal(t, byte(1), v1[len(magic)])
	got, err := Unlock(v1, a, OpenLimit)
	require.NoError(t, err)
	require.Equal(t, kr.cur, got.cur)
	v2, err := got.Header()
	require.NoError(t, err)
	require.Equal(t, byte(2), v2[len(magic)])
	require.Equal(t, len(v1)+4, len(v2))
	// A version-1 header's damaged memory field is still bounded.
	bad := bytes.Clone(v1)
	off := len(magic) + 3 + 16 + 1 + 1 + 4
	binary.BigEndian.PutUint32(bad[off:], 1<<20)
	before := derivations.Load()
	_, err = Unlock(bad, a, OpenLimit)
	require.ErrorIs(t, err, ErrCost)
	require.Equal(t, before, derivations.Load())
}

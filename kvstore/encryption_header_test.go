package kvstore_test

import (
	"encoding/binary"
	"hash/crc32"
	"runtime"
	"testing"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// The encryption header's fields (docs/format.md): a password slot's
// passes and memory, and the checksum at the end of a version-2 header.
const (
	hdrPasses = 29
	hdrMemory = 33
)

// setHeader writes h as the store's encryption header, as another tool
// could.
func setHeader(t *testing.T, path string, h []byte) {
	t.Helper()
	execRaw(t, path, `UPDATE __snkv_meta SET value = ? WHERE name = 'encryption'`, h)
}

// withChecksum returns h with its checksum made to match, as a forger
// would.
func withChecksum(h []byte) []byte {
	n := len(h) - 4
	return binary.BigEndian.AppendUint32(append([]byte(nil), h[:n]...), crc32.Checksum(h[:n], crc32.MakeTable(crc32.Castagnoli)))
}

// allocDuring returns the bytes fn allocated.
func allocDuring(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// lightEncryptedStore makes a closed store encrypted with a password and
// the light KDF, holding k = v, and returns its path, its secret and its
// encryption header as written.
func lightEncryptedStore(t *testing.T) (string, *kvstore.Encryption, []byte) {
	t.Helper()
	path := tempPath(t)
	light := &kvstore.Encryption{Password: []byte("pw"), KDF: kvstore.LightKDF}
	s := openAt(t, path, kvstore.Options{Encryption: light})
	require.NoError(t, s.Default().Put([]byte("k"), []byte("v")))
	require.NoError(t, s.Close())
	return path, light, liveHeader(t, path)
}

// A flipped bit in the header's cost is caught before any key is derived
// with it: a flipped bit of the memory field (9 MiB becoming 1 GiB) once
// made Open allocate that much before ErrAuth. A cost made to pass the
// checksum is bounded by KDFOpenLimit.
func TestDamagedKDFCostRefusedBeforeDeriving(t *testing.T) {
	path, light, good := lightEncryptedStore(t)
	require.Equal(t, kvstore.LightKDF.MemoryKiB, binary.BigEndian.Uint32(good[hdrMemory:]))

	open := func() error {
		_, err := kvstore.Open(path, kvstore.Options{Encryption: light})
		return err
	}
	for bit := range 32 {
		bad := append([]byte(nil), good...)
		bad[hdrMemory+3-bit/8] ^= 1 << (bit % 8)
		setHeader(t, path, bad)
		var err error
		n := allocDuring(func() { err = open() })
		require.ErrorIs(t, err, kvstore.ErrCorrupt, "bit %d of the memory field", bit)
		require.Less(t, n, uint64(4<<20), "bit %d of the memory field: Open allocated %d bytes", bit, n)
	}

	// Forged with a matching checksum: refused before deriving, unless the
	// caller allows that cost.
	for _, f := range []struct {
		off int
		v   uint32
	}{{hdrMemory, 1 << 20}, {hdrMemory, kvstore.KDFOpenLimit.MemoryKiB + 1}, {hdrPasses, kvstore.KDFOpenLimit.Time + 1}} {
		bad := append([]byte(nil), good...)
		binary.BigEndian.PutUint32(bad[f.off:], f.v)
		setHeader(t, path, withChecksum(bad))
		var err error
		n := allocDuring(func() { err = open() })
		require.ErrorIs(t, err, kvstore.ErrInvalidOption)
		require.Contains(t, err.Error(), "KDFOpenLimit")
		require.Less(t, n, uint64(4<<20), "Open allocated %d bytes", n)
	}
	bad := append([]byte(nil), good...)
	binary.BigEndian.PutUint32(bad[hdrPasses:], kvstore.KDFOpenLimit.Time+1)
	setHeader(t, path, withChecksum(bad))
	allow := *light
	allow.KDF.Time = kvstore.KDFOpenLimit.Time + 1
	_, err := kvstore.Open(path, kvstore.Options{Encryption: &allow})
	require.ErrorIs(t, err, kvstore.ErrAuth, "allowed, derived, and the changed field fails the wrap")

	setHeader(t, path, good)
	s := openAt(t, path, kvstore.Options{Encryption: light})
	v, err := s.Default().Get([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, "v", string(v))
}

// A new password's cost is at most KDFOpenLimit, so that every open can
// derive with it.
func TestNewPasswordCostAtMostOpenLimit(t *testing.T) {
	over := kvstore.KDFOpenLimit
	over.MemoryKiB++
	_, err := kvstore.Open(tempPath(t), kvstore.Options{Encryption: &kvstore.Encryption{Password: []byte("p"), KDF: over}})
	require.ErrorIs(t, err, kvstore.ErrInvalidOption)
	s := openTemp(t, kvstore.Options{Encryption: rawKey(1)})
	err = s.Rekey(t.Context(), kvstore.Encryption{Password: []byte("p"), KDF: over})
	require.ErrorIs(t, err, kvstore.ErrInvalidArgument)
	require.NoError(t, s.Rekey(t.Context(), kvstore.Encryption{Password: []byte("p"), KDF: kvstore.KDF{Time: 1, MemoryKiB: 64, Threads: 1}}))
}

// A header row whose SQL type is wrong (what one flipped type bit in a
// record, or a tool that rewrote the row, produces) is a damaged header:
// ErrCorrupt, as a damaged BLOB is, never ErrAuth, which would send the
// user hunting for a password that is right. The store opens again once
// the row is put back.
func TestHeaderRowOfWrongTypeIsCorrupt(t *testing.T) {
	path, light, good := lightEncryptedStore(t)

	for _, damage := range []string{
		`UPDATE __snkv_meta SET value = CAST(value AS TEXT) WHERE name = 'encryption'`,
		`UPDATE __snkv_meta SET value = 7 WHERE name = 'encryption'`,
		`UPDATE __snkv_meta SET value = 1.5 WHERE name = 'encryption'`,
		`UPDATE __snkv_meta SET value = NULL WHERE name = 'encryption'`,
		`UPDATE __snkv_meta SET value = CAST(value AS TEXT) WHERE name = 'format'`,
		`UPDATE __snkv_meta SET value = x'02' WHERE name = 'format'`,
		`UPDATE __snkv_meta SET value = 2.0 WHERE name = 'format'`,
	} {
		execRaw(t, path, damage)
		_, err := kvstore.Open(path, kvstore.Options{Encryption: light})
		require.ErrorIs(t, err, kvstore.ErrCorrupt, damage)
		require.NotErrorIs(t, err, kvstore.ErrAuth, damage)
		execRaw(t, path, `UPDATE __snkv_meta SET value = 2 WHERE name = 'format'`)
		setHeader(t, path, good)
	}
	s := openAt(t, path, kvstore.Options{Encryption: light})
	v, err := s.Default().Get([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, "v", string(v))
}

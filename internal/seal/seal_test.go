package seal

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20poly1305"
)

var cheap = KDF{Time: 1, MemoryKiB: 64, Threads: 1}

func TestSealOpenBindsTableAndKey(t *testing.T) {
	kr, err := Create(Secret{Key: bytes.Repeat([]byte{1}, KeySize)})
	require.NoError(t, err)
	st, err := kr.State()
	require.NoError(t, err)
	k := st.Write
	sealed := k.Seal(nil, "cf", []byte("key"), []byte("value"))
	require.Len(t, sealed, len("value")+Overhead)
	v, err := k.Open(nil, "cf", []byte("key"), sealed)
	require.NoError(t, err)
	require.Equal(t, "value", string(v))

	// The same construction as chacha20poly1305.NewX, nonce first.
	x, err := chacha20poly1305.NewX(kr.cur)
	require.NoError(t, err)
	_, err = x.Open(nil, sealed[:NonceSize], sealed[NonceSize:], k.ad(nil, "cf", []byte("key"))[nonceRoom:])
	require.NoError(t, err)

	for _, c := range []struct{ table, key string }{{"cf2", "key"}, {"cf", "key2"}, {"c", "fkey"}} {
		_, err := k.Open(nil, c.table, []byte(c.key), sealed)
		require.ErrorIs(t, err, ErrOpen, "%+v", c)
	}
	for i := range sealed {
		bad := bytes.Clone(sealed)
		bad[i] ^= 0x20
		_, err := k.Open(nil, "cf", []byte("key"), bad)
		require.ErrorIs(t, err, ErrOpen, "flip at %d", i)
	}
	_, err = k.Open(nil, "cf", []byte("key"), sealed[:Overhead-1])
	require.ErrorIs(t, err, ErrOpen)
	// Two seals of one value differ (a fresh nonce each).
	require.NotEqual(t, sealed, k.Seal(nil, "cf", []byte("key"), []byte("value")))

	// Another store with the same key: its identifier differs.
	kr2, err := Create(Secret{Key: bytes.Repeat([]byte{1}, KeySize)})
	require.NoError(t, err)
	kr2.cur = bytes.Clone(kr.cur)
	st2, err := kr2.State()
	require.NoError(t, err)
	_, err = st2.Write.Open(nil, "cf", []byte("key"), sealed)
	require.ErrorIs(t, err, ErrOpen)
}

func TestHeaderUnlockAndJobs(t *testing.T) {
	a := Secret{Password: []byte("alpha"), KDF: cheap}
	b := Secret{Key: bytes.Repeat([]byte{9}, KeySize)}
	kr, err := Create(a)
	require.NoError(t, err)
	require.Equal(t, JobEncrypt, kr.Job())
	h, err := kr.Header()
	require.NoError(t, err)
	require.True(t, IsHeader(h))

	got, err := Unlock(h, a, OpenLimit)
	require.NoError(t, err)
	require.Equal(t, kr.cur, got.cur)
	require.Equal(t, JobEncrypt, got.Job())
	_, err = Unlock(h, Secret{Password: []byte("beta"), KDF: cheap}, OpenLimit)
	require.ErrorIs(t, err, ErrOpen)
	_, err = Unlock(h, b, OpenLimit)
	require.ErrorIs(t, err, ErrOpen)

	// Every changed byte of the header is refused.
	for i := range h {
		bad := bytes.Clone(h)
		bad[i] ^= 1
		_, err := Unlock(bad, a, OpenLimit)
		require.Error(t, err, "flip at %d", i)
	}
	for n := range len(h) {
		_, err := Unlock(h[:n], a, OpenLimit)
		require.ErrorIs(t, err, ErrHeader)
	}

	h, err = kr.Finish()
	require.NoError(t, err)
	old := bytes.Clone(kr.cur)
	require.NoError(t, kr.BeginRekey(b))
	require.Error(t, kr.BeginDecrypt(), "one job at a time")
	st, err := kr.State()
	require.NoError(t, err)
	require.NotNil(t, st.KeyOf(0))
	require.NotNil(t, st.KeyOf(1))
	require.Equal(t, uint8(1), st.Write.Gen())
	hr, err := kr.Header()
	require.NoError(t, err)
	// Mid re-key either secret opens it, and either can finish.
	for _, s := range []Secret{a, b} {
		k, err := Unlock(hr, s, OpenLimit)
		require.NoError(t, err)
		require.Equal(t, JobRekey, k.Job())
		final, err := k.Finish()
		require.NoError(t, err)
		done, err := Unlock(final, b, OpenLimit)
		require.NoError(t, err)
		require.NotEqual(t, old, done.cur)
		require.Equal(t, uint8(1), done.gen)
		_, err = Unlock(final, a, OpenLimit)
		require.ErrorIs(t, err, ErrOpen)
	}
	_, err = Unlock(h, a, OpenLimit)
	require.NoError(t, err, "the header before the re-key still opens with the old secret")
}

func TestSecretValidation(t *testing.T) {
	for _, s := range []Secret{
		{},
		{Password: []byte{}},
		{Key: make([]byte, 31)},
		{Password: []byte("p"), Key: make([]byte, 32)},
		{Password: []byte("p"), KDF: KDF{Time: 0, MemoryKiB: 64, Threads: 1}},
		{Password: []byte("p"), KDF: KDF{Time: 1, MemoryKiB: 7, Threads: 1}},
		{Password: []byte("p"), KDF: KDF{Time: 1, MemoryKiB: 64, Threads: 0}},
		{Password: []byte("p"), KDF: KDF{Time: 65, MemoryKiB: 64, Threads: 1}},
	} {
		require.Error(t, s.Validate(), "%+v", s.KDF)
		_, err := Create(s)
		require.Error(t, err)
	}
	require.NoError(t, Secret{Password: []byte("p")}.Validate())
	require.NoError(t, DefaultKDF.Validate())
	require.NoError(t, LightKDF.Validate())
}

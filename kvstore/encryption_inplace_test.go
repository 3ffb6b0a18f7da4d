package kvstore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// A store in the clear opened with a secret is refused, not encrypted
// under it: a mistyped password in a configuration must not lock the data
// under the typo. The caller asks for the conversion explicitly
// (Encryption.EncryptInPlace, or Store.Encrypt); a store Open creates is
// encrypted from the start.
func TestOpenRefusesToEncryptAStoreInTheClear(t *testing.T) {
	skipSealedSuite(t)
	path := tempPath(t)
	s := openAt(t, path, kvstore.Options{})
	require.NoError(t, s.Put([]byte("k"), []byte("in the clear")))
	require.NoError(t, s.Close())

	before := fileSum(t, path)
	for _, opts := range []kvstore.Options{
		{Encryption: pw("typo")},
		{Encryption: rawKey(1)},
		{Encryption: pw("typo"), ReadOnly: true},
	} {
		_, err := kvstore.Open(path, opts)
		require.ErrorIs(t, err, kvstore.ErrNotEncrypted)
		require.NotErrorIs(t, err, kvstore.ErrAuth)
		require.Contains(t, err.Error(), "not encrypted")
		require.NotContains(t, err.Error(), "typo")
		require.Equal(t, before, fileSum(t, path), "a refused open changed the file")
		_, err = os.Stat(path + "-shm")
		require.True(t, os.IsNotExist(err), "a refused open left a -shm")
	}
	s = openAt(t, path, kvstore.Options{})
	require.False(t, s.Encrypted())
	require.ErrorIs(t, s.Rekey(context.Background(), *pw("x")), kvstore.ErrNotEncrypted)
	require.ErrorIs(t, s.RemoveEncryption(context.Background()), kvstore.ErrNotEncrypted)
	require.ErrorIs(t, s.Rekey(context.Background(), *pw("x")), kvstore.ErrInvalidArgument, "as before")
	require.NoError(t, s.Close())

	// Asked for: encrypted in place.
	_, err := kvstore.Open(path, kvstore.Options{ReadOnly: true, Encryption: &kvstore.Encryption{Key: rawKey(2).Key, EncryptInPlace: true}})
	require.ErrorIs(t, err, kvstore.ErrReadOnly)
	s = openAt(t, path, kvstore.Options{Encryption: &kvstore.Encryption{Key: rawKey(2).Key, EncryptInPlace: true}})
	require.True(t, s.Encrypted())
	v, err := s.Get([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, "in the clear", string(v))
	require.NoError(t, s.Close())
	s = openAt(t, path, kvstore.Options{Encryption: rawKey(2)})
	require.True(t, s.Encrypted())

	// New stores: a missing file and an empty one.
	fresh := filepath.Join(t.TempDir(), "new.db")
	s = openAt(t, fresh, kvstore.Options{Encryption: rawKey(3)})
	require.True(t, s.Encrypted())
	empty := filepath.Join(t.TempDir(), "empty.db")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	s = openAt(t, empty, kvstore.Options{Encryption: rawKey(3)})
	require.True(t, s.Encrypted())
}

// A bad secret given to create a store is refused before the file is
// touched: no store is left behind, in the clear, for the corrected secret
// to be refused with ErrNotEncrypted. An empty file stays empty.
func TestOpenWithABadSecretCreatesNothing(t *testing.T) {
	for _, e := range []kvstore.Encryption{
		{},
		{Key: make([]byte, 31)},
		{Key: []byte{}},
		{Password: []byte{}},
		{Password: []byte("pw"), Key: make([]byte, 32)},
		{Password: []byte("pw"), KDF: kvstore.KDF{Time: 1, MemoryKiB: 1, Threads: 1}},
		{Password: []byte("pw"), KDF: kvstore.KDF{Time: kvstore.KDFOpenLimit.Time + 1, MemoryKiB: 64, Threads: 1}},
		{Password: []byte("pw"), KDF: kvstore.KDF{Time: 1, MemoryKiB: 1 << 20, Threads: 1}},
	} {
		for _, empty := range []bool{false, true} {
			path := tempPath(t)
			if empty {
				require.NoError(t, os.WriteFile(path, nil, 0o600))
			}
			_, err := kvstore.Open(path, kvstore.Options{Encryption: &e})
			require.ErrorIs(t, err, kvstore.ErrInvalidOption)
			if empty {
				fi, err := os.Stat(path)
				require.NoError(t, err)
				require.Zero(t, fi.Size(), "the empty file was made a store")
				require.NoError(t, os.Remove(path))
			}
			require.Empty(t, testutil.ListDir(t, filepath.Dir(path)), "a refused Open left files")
			s := openAt(t, path, kvstore.Options{Encryption: rawKey(1)})
			require.True(t, s.Encrypted())
			require.NoError(t, s.Close())
		}
	}
}

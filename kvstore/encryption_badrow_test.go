package kvstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// badRowStore makes an encrypted store (secret enc) of 300 values and one
// row in the clear that the shell inserted, as docs/format.md describes:
// reading it gives ErrAuth.
func badRowStore(t *testing.T, enc *kvstore.Encryption) string {
	t.Helper()
	path := tempPath(t)
	s := openAt(t, path, kvstore.Options{Encryption: enc, UpgradeBatch: 50})
	for i := range 300 {
		require.NoError(t, s.Default().Put(fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "value %d", i)))
	}
	require.NoError(t, s.Close())
	execRaw(t, path, `INSERT INTO "default" (key, value) VALUES (CAST('shell' AS BLOB), CAST('typed in the shell' AS BLOB))`)
	s = openAt(t, path, kvstore.Options{Encryption: enc})
	_, err := s.Default().Get([]byte("shell"))
	require.ErrorIs(t, err, kvstore.ErrAuth)
	require.NoError(t, s.Close())
	return path
}

// requireBadRow checks the error of a conversion that met the shell's row:
// it finished, and names the row as CheckIntegrity does, never calling the
// secret wrong.
func requireBadRow(t *testing.T, err error) {
	t.Helper()
	var bad *kvstore.BadRowsError
	require.ErrorAs(t, err, &bad)
	require.EqualValues(t, 1, bad.Rows)
	require.Len(t, bad.Problems, 1)
	require.Contains(t, bad.Problems[0], `key "shell"`)
	require.ErrorIs(t, err, kvstore.ErrCorrupt)
	require.NotErrorIs(t, err, kvstore.ErrAuth)
}

// requireValues checks the 300 values of badRowStore.
func requireValues(t *testing.T, s *kvstore.Store) {
	t.Helper()
	for i := range 300 {
		v, err := s.Default().Get(fmt.Appendf(nil, "k%03d", i))
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("value %d", i), string(v))
	}
}

// A row no key reads never stops a conversion: the conversion finishes
// around it and reports it.
func TestConversionsFinishAroundABadRow(t *testing.T) {
	skipSealedSuite(t)
	path := badRowStore(t, rawKey(1))
	s := openAt(t, path, kvstore.Options{Encryption: rawKey(1), UpgradeBatch: 50})
	requireBadRow(t, s.Rekey(context.Background(), *rawKey(2)))
	require.True(t, s.Encrypted())
	requireValues(t, s)
	rep, err := s.CheckIntegrity(context.Background())
	require.NoError(t, err)
	require.Len(t, rep.Problems, 1, "CheckIntegrity names the same row")
	require.NoError(t, s.Close())

	_, err = kvstore.Open(path, kvstore.Options{Encryption: rawKey(1)})
	require.ErrorIs(t, err, kvstore.ErrAuth, "the re-key finished: the old key is retired")
	s = openAt(t, path, kvstore.Options{Encryption: rawKey(2)})
	requireValues(t, s)
	// Removing the encryption takes a row in the clear as it is.
	require.NoError(t, s.RemoveEncryption(context.Background()))
	v, err := s.Default().Get([]byte("shell"))
	require.NoError(t, err)
	require.Equal(t, "typed in the shell", string(v))
}

// A re-key that a bad row used to stop part way left its job recorded, and
// every writable Open then failed with ErrAuth, with either secret. Open
// finishes such a job around the row.
func TestOpenFinishesAJobAroundABadRow(t *testing.T) {
	skipSealedSuite(t)
	path := badRowStore(t, pw("old"))
	s := openAt(t, path, kvstore.Options{Encryption: pw("old"), UpgradeBatch: 50})
	// Stop the re-key once it has recorded its job.
	for n := 5; ; n += 5 {
		err := s.Rekey(newCancelAfter(n), *pw("new"))
		require.Error(t, err)
		if pendingRekey(t, path) {
			break
		}
	}
	require.NoError(t, s.Close())
	for _, enc := range []*kvstore.Encryption{pw("old"), pw("new")} {
		s, err := kvstore.Open(path, kvstore.Options{Encryption: enc, UpgradeBatch: 50})
		require.NoError(t, err, "the right secret is never called wrong")
		requireValues(t, s)
		require.NoError(t, s.Close())
	}
}

// pendingRekey reads, as another tool would, whether the header records a
// re-key under way.
func pendingRekey(t *testing.T, path string) bool {
	t.Helper()
	db := rawDB(t, "file:"+path+"?mode=ro")
	defer db.Close()
	var job int
	require.NoError(t, db.QueryRow(`SELECT unicode(CAST(substr(value, 11, 1) AS TEXT)) FROM __snkv_meta WHERE name = 'encryption'`).Scan(&job))
	return job == 2
}

// A handle opened before Encrypt writes in the clear after it (as another
// process that had the store open would): the row is refused on read, and
// the next conversion finishes around it.
func TestStaleHandleWriteDoesNotBlockRekey(t *testing.T) {
	skipSealedSuite(t)
	path := tempPath(t)
	s := openAt(t, path, kvstore.Options{UpgradeBatch: 50})
	stale := openAt(t, path, kvstore.Options{})
	for i := range 300 {
		require.NoError(t, s.Default().Put(fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "value %d", i)))
	}
	require.NoError(t, s.Encrypt(context.Background(), *rawKey(1)))
	require.NoError(t, stale.Default().Put([]byte("shell"), []byte("written in the clear")))
	_, err := s.Default().Get([]byte("shell"))
	require.ErrorIs(t, err, kvstore.ErrAuth)
	requireBadRow(t, s.Rekey(context.Background(), *rawKey(2)))
	requireValues(t, s)
	require.False(t, errors.Is(s.Close(), kvstore.ErrAuth))
}

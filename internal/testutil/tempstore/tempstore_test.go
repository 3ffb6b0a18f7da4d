package tempstore_test

import (
	"context"
	"os"
	"testing"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/internal/testutil/tempstore"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// Open makes a store in a fresh directory, closed when the test ends; a
// store the test closed itself is no failure.
func TestOpen(t *testing.T) {
	var path string
	t.Run("open", func(t *testing.T) {
		db, p := tempstore.Open(t, kvstore.Options{})
		path = p
		require.NoError(t, db.Put([]byte("k"), []byte("v")))
		closed, _ := tempstore.Open(t, kvstore.Options{})
		require.NoError(t, closed.Close())
		mem := tempstore.OpenAt(t, "", kvstore.Options{})
		require.NoError(t, mem.Put([]byte("k"), []byte("v")))
	})
	_, err := os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "the directory is gone with the test")
}

// TestSealedChild is the child of TestOptionsSealed: it reports what the
// suite's switch gives under the environment it was started with.
func TestSealedChild(t *testing.T) {
	testutil.ChildOnly(t)
	o := tempstore.Options(kvstore.Options{})
	if !tempstore.Sealed() {
		require.Nil(t, o.Encryption)
		return
	}
	require.NotNil(t, o.Encryption)
	require.Equal(t, tempstore.Key, o.Encryption.Key)
	require.True(t, o.Encryption.EncryptInPlace)
	own := &kvstore.Encryption{Password: []byte("given")}
	require.Same(t, own, tempstore.Options(kvstore.Options{Encryption: own}).Encryption, "a test's own secret is kept")

	// A fixture made in the clear is encrypted by the suite's open.
	path := tempstore.Path(t, "clear.db")
	db := tempstore.OpenAt(t, path, kvstore.Options{Encryption: nil})
	require.NoError(t, db.Put([]byte("k"), []byte("v")))
	require.NoError(t, db.Close())
	db = tempstore.OpenAt(t, path, o)
	require.True(t, db.Encrypted())
	v, err := db.Get([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, "v", string(v))
}

// SNKV_TEST_ENCRYPTION=1 gives stores the suite's key; without it, Options
// changes nothing.
func TestOptionsSealed(t *testing.T) {
	for _, env := range []string{"", "1"} {
		out, err := testutil.RunChild(context.Background(), t, "TestSealedChild", "SNKV_TEST_ENCRYPTION="+env)
		require.NoError(t, err, "SNKV_TEST_ENCRYPTION=%s:\n%s", env, out)
		require.Contains(t, string(out), "--- PASS: TestSealedChild")
	}
}

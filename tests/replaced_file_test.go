package tests

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/kvstore"
)

// TestReplacedFileRefusesReaders: a store opens its read connections by
// path when first needed, so once another program deleted the file and
// made a new store at the same path, a new reader opened the other store.
// Get then answered with the other store's value, and a scan found no
// catalog row with the default column family's creation stamp and
// reported it dropped, for good ("column family was dropped": the message
// one run of the memory workload gave on a shared machine). A reader that opens another
// file is refused with ErrCantOpen, and the column family stays usable.
func TestReplacedFileRefusesReaders(t *testing.T) {
	st, path := openToReplace(t)

	// Another program removes the store's files and makes a new store at
	// the path, before this store opened any reader.
	for _, s := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + s); !errors.Is(err, os.ErrNotExist) {
			require.NoError(t, err)
		}
	}
	other, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	require.NoError(t, other.Put([]byte("k"), []byte("other")))
	require.NoError(t, other.Close())

	v, err := st.Get([]byte("k"))
	require.ErrorIs(t, err, kvstore.ErrCantOpen, "read %q", v)
	for _, err := range st.All() {
		require.ErrorIs(t, err, kvstore.ErrCantOpen)
		require.NotErrorIs(t, err, kvstore.ErrNotFound, "the column family is not dropped")
		break
	}
	// The writer still has the file the store opened: writes go on there.
	require.NoError(t, st.Put([]byte("k2"), []byte("mine")))
}

// TestDeletedFileRefusesReaders: a store whose file was deleted (nothing
// made in its place) refuses a new reader with ErrCantOpen too, without
// the reader's open making an empty file at the path.
func TestDeletedFileRefusesReaders(t *testing.T) {
	st, path := openToReplace(t)
	require.NoError(t, os.Remove(path))
	_, err := st.Get([]byte("k"))
	require.ErrorIs(t, err, kvstore.ErrCantOpen)
	_, err = os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// openToReplace opens a store in a new directory, with one key written,
// for a test that then deletes or replaces its file; it skips on Windows,
// where an open file cannot be deleted.
func openToReplace(t *testing.T) (*kvstore.Store, string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("an open file cannot be deleted on Windows")
	}
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	require.NoError(t, st.Put([]byte("k"), []byte("mine")))
	return st, path
}

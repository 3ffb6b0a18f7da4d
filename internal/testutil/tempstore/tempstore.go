// Package tempstore opens the temporary stores tests work on, and holds the
// suite's encryption switch: SNKV_TEST_ENCRYPTION=1 (make test's second
// run) asks the suites above kvstore to run against encrypted stores.
//
// Only test files import it. It sits above kvstore in the import order
// (README, Layout): kvstore's external tests and the packages above use it,
// the packages below kvstore cannot.
package tempstore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// Sealed reports whether the suite runs against encrypted stores
// (SNKV_TEST_ENCRYPTION=1).
func Sealed() bool { return sealed }

var sealed = os.Getenv("SNKV_TEST_ENCRYPTION") == "1"

// Key is the raw key of the suite's encrypted stores.
var Key = bytes.Repeat([]byte{0x7e}, 32)

// Options returns o as the suite opens stores: when it runs against
// encrypted stores (Sealed) and o has no Encryption, with the suite's Key,
// and EncryptInPlace, so that a writable open encrypts a fixture a test
// made in the clear (a read-only open finds it encrypted already).
func Options(o kvstore.Options) kvstore.Options {
	if sealed && o.Encryption == nil {
		o.Encryption = &kvstore.Encryption{Key: Key, EncryptInPlace: true}
	}
	return o
}

// Path returns the path of a file named name in a fresh temporary
// directory, removed when the test ends.
func Path(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(t.TempDir(), name)
}

// Open opens a new store, with o as given (not through Options), in a
// fresh temporary directory and returns it and its path. The store is
// closed when the test ends, unless the test closed it; an error of that
// Close fails the test.
func Open(t testing.TB, o kvstore.Options) (*kvstore.Store, string) {
	t.Helper()
	path := Path(t, "store.db")
	return OpenAt(t, path, o), path
}

// OpenAt opens the store at path (empty: an in-memory store) with o as
// given, closed when the test ends as Open's is.
func OpenAt(t testing.TB, path string, o kvstore.Options) *kvstore.Store {
	t.Helper()
	db, err := kvstore.Open(path, o)
	require.NoError(t, err, "open %s", path)
	t.Cleanup(func() {
		if err := db.Close(); err != nil && !errors.Is(err, kvstore.ErrClosed) {
			t.Errorf("close %s: %v", path, err)
		}
	})
	return db
}

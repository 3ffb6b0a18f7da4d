package testutil

import (
	"compress/gzip"
	"io"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// ListDir returns the names of the entries of dir, sorted: what a test
// compares to see that a call left no file behind or made only the ones
// it should.
func ListDir(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// ReadGzip returns the contents of the gzip file at path (a compressed
// fixture under testdata).
func ReadGzip(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	return b
}

// StoreBytes returns the bytes of the store file at path and of its WAL,
// one after the other, as anyone holding the files reads them (a missing
// WAL reads as empty): what a test searches for a value left in the clear.
func StoreBytes(t testing.TB, path string) []byte {
	t.Helper()
	var all []byte
	for _, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			require.NoError(t, err)
		}
		all = append(all, b...)
	}
	return all
}

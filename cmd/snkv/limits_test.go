package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TestValueLimitsMatchLibrary holds the CLI's limits on a value to the
// library's: a store opened with the zero Options takes a value of
// defaultMaxValueSize bytes and refuses one byte more, and Open takes
// MaxValueSize up to hardMaxValueSize and refuses one more.
func TestValueLimitsMatchLibrary(t *testing.T) {
	dir := t.TempDir()
	db, err := kvstore.Open(filepath.Join(dir, "limits.db"), kvstore.Options{})
	require.NoError(t, err)
	require.NoError(t, db.Put([]byte("at"), make([]byte, defaultMaxValueSize)))
	require.ErrorIs(t, db.Put([]byte("over"), make([]byte, defaultMaxValueSize+1)), kvstore.ErrValueTooLarge)
	require.NoError(t, db.Close())

	db, err = kvstore.Open(filepath.Join(dir, "hard.db"), kvstore.Options{MaxValueSize: hardMaxValueSize})
	require.NoError(t, err)
	require.NoError(t, db.Close())
	_, err = kvstore.Open(filepath.Join(dir, "over.db"), kvstore.Options{MaxValueSize: hardMaxValueSize + 1})
	require.ErrorIs(t, err, kvstore.ErrInvalidOption)
}

// TestReadLimited reads inputs around the limit, in one piece and in
// several, and refuses one byte more.
func TestReadLimited(t *testing.T) {
	for _, n := range []int{0, 1, 64 << 10, 64<<10 + 1, 3 << 20, 3<<20 + 7} {
		in := bytes.Repeat([]byte("ab"), n/2+1)[:n]
		got, err := readLimited(bytes.NewReader(in), n, "VALUE")
		require.NoError(t, err, "%d bytes", n)
		require.True(t, bytes.Equal(in, got), "%d bytes", n)
		_, err = readLimited(bytes.NewReader(append(in, 'x')), n, "VALUE")
		require.ErrorContains(t, err, "value too large", "%d bytes", n)
	}
}

// TestReadLine reads lines up to the bound, split across the reader's
// buffer or not, and refuses a longer one.
func TestReadLine(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	lr := readLines(strings.NewReader("a\n"+long+"\r\nlast"), len(long))
	var got []string
	for c := range lr.ch {
		require.NoError(t, c.err)
		for _, l := range c.lines {
			got = append(got, string(l))
		}
		lr.release(c)
	}
	require.Equal(t, []string{"a\n", long + "\r\n", "last"}, got)

	lr = readLines(strings.NewReader("a\n"+long+"\n"), len(long)-1)
	defer lr.stop()
	var lines int
	var last error
	for c := range lr.ch {
		lines += len(c.lines)
		last = c.err
		lr.release(c)
	}
	require.Equal(t, 1, lines)
	require.ErrorIs(t, last, errLineTooLong)
}

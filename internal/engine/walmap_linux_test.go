//go:build linux

package engine

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// A mapping longer than its file serves the bytes the file has, and a
// read of a page past the file's end reports false (the fault it takes is
// recovered) instead of crashing the process: walRead then leaves it to
// the file's own read.
func TestWALMapReadPastEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	require.NoError(t, os.WriteFile(path, data, 0o600))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer func() { require.NoError(t, f.Close()) }()
	const size = 1 << 20
	base := walMapFD(int(f.Fd()), size)
	require.NotZero(t, base)
	defer walMapClose(base, size)

	buf := make([]byte, 4096)
	p := uintptr(unsafe.Pointer(&buf[0]))
	require.True(t, walMapRead(base, p, 4096, 100))
	require.Equal(t, data[100:4196], buf)
	require.False(t, walMapRead(base, p, 4096, 64<<10), "a page past the end of the file")

	// The file grows under the mapping: the new bytes are served.
	more := make([]byte, 10000)
	for i := range more {
		more[i] = byte(i * 3)
	}
	g, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = g.WriteAt(more, 60<<10)
	require.NoError(t, err)
	require.NoError(t, g.Close())
	require.True(t, walMapRead(base, p, 4096, 64<<10))
	require.Equal(t, more[4096:8192], buf)
}

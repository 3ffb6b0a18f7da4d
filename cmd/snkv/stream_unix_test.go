//go:build unix

package main

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// valueStore writes a store of n keys with values of size bytes, with the
// binary.
func valueStore(t *testing.T, n, size int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "values.db")
	var in bytes.Buffer
	v := strings.Repeat("x", size)
	for i := range n {
		fmt.Fprintf(&in, `{"cf":"default","key":"k%07d","value":"%s"}`+"\n", i, v)
	}
	r := cli(t, &in, "import", path, "--create", "--batch", "10000")
	require.Equal(t, 0, r.code, r.stderr)
	return path
}

// peakRSS runs the binary with args, its output thrown away, and returns
// its peak resident memory in bytes.
func peakRSS(t *testing.T, args ...string) int64 {
	t.Helper()
	cmd := exec.Command(snkvBin, args...)
	cmd.Stdout = io.Discard
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	require.True(t, ok)
	rss := int64(ru.Maxrss)
	if runtime.GOOS != "darwin" {
		rss *= 1024 // kilobytes elsewhere
	}
	return rss
}

// TestScanMemoryBounded compares the peak memory of listings of 40 MiB of
// values with that of count, which reads the same rows (so the same pages
// of the memory-mapped file) and keeps nothing: the table, the JSON lines
// and the exports stream, so they stay within a few MiB of it, where
// holding the rows would add the data's size or more.
func TestScanMemoryBounded(t *testing.T) {
	path := valueStore(t, 20_000, 2048)
	base := peakRSS(t, "count", path, "--prefix", "k")
	for _, args := range [][]string{{"scan"}, {"scan", "--json"}, {"export"}, {"export", "--format", "tsv"}} {
		rss := peakRSS(t, append(args, path)...)
		t.Logf("%v: peak RSS %d MiB, count: %d MiB", args, rss>>20, base>>20)
		require.Less(t, rss, base+16<<20, "%v holds what it prints", args)
	}
}

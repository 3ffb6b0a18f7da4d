//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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
// its peak resident memory in bytes: the high-water mark (VmHWM) of its
// own address space, read from /proc while it runs. (The rusage of a
// child started with vfork counts the parent's memory too.)
func peakRSS(t *testing.T, args ...string) int64 {
	t.Helper()
	rss, r := peakRSSIn(t, nil, args...)
	require.Equal(t, 0, r.code, r.stderr)
	return rss
}

// peakRSSIn is peakRSS with stdin from in (nil: empty), for a command that
// may fail: it returns what the command printed on stderr and its exit
// code too.
func peakRSSIn(t *testing.T, in io.Reader, args ...string) (int64, result) {
	t.Helper()
	cmd := exec.Command(snkvBin, args...)
	cmd.Env = append(os.Environ(), nowEnv+"="+t0.Format(time.RFC3339Nano))
	cmd.Stdin = in
	cmd.Stdout = io.Discard
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	var peak int64
	for {
		select {
		case err := <-done:
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err, stderr.String())
			}
			require.Positive(t, peak, "no sample of the process's memory")
			return peak, result{stderr: stderr.String(), code: code}
		default:
		}
		if b, err := os.ReadFile(status); err == nil {
			// Only samples after the exec count: before it, the address
			// space is the test's.
			if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", cmd.Process.Pid)); err == nil && exe == snkvBin {
				for _, line := range strings.Split(string(b), "\n") {
					if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
						kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
						if err == nil {
							peak = max(peak, kb<<10)
						}
					}
				}
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
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
		require.Less(t, rss, int64(40<<20), "%v: the whole run stays below the size of the values it lists", args)
	}
}

// TestTimelogAppendMemoryBounded appends records from a pipe: the peak
// memory of 1M records is that of 100k, within a few MiB (the records are
// flushed as they come, whatever the log's busy policy).
func TestTimelogAppendMemoryBounded(t *testing.T) {
	dir := t.TempDir()
	small, r := peakRSSIn(t, &recordLines{n: 100_000}, "timelog", "append", filepath.Join(dir, "small.db"), "l", "--create")
	require.Equal(t, 0, r.code, r.stderr)
	large, r := peakRSSIn(t, &recordLines{n: 1_000_000}, "timelog", "append", filepath.Join(dir, "large.db"), "l", "--create")
	require.Equal(t, 0, r.code, r.stderr)
	t.Logf("peak RSS: 100k records %d MiB, 1M records %d MiB", small>>20, large>>20)
	require.Less(t, large, small+16<<20, "memory grows with the records appended")
}

// repeated is stdin of n bytes c, made as it is read.
type repeated struct {
	c byte
	n int64
}

func (z *repeated) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), z.n))
	for i := range p[:n] {
		p[i] = z.c
	}
	z.n -= int64(n)
	return n, nil
}

// TestOversizedInputMemoryBounded gives put and import far more than the
// limit of a value (10 MiB): each is refused once it has read past the
// limit, with a peak memory of a small multiple of the limit. (put read
// 500 MB whole to 1.26 GB before refusing it, --value-file of a 500 MB file
// 526 MB, a one-line import of 300 MB 630 MB.)
func TestOversizedInputMemoryBounded(t *testing.T) {
	path := fixture(t)
	dir := filepath.Dir(path)
	big := filepath.Join(dir, "big.bin")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<30)) // sparse: 1 GiB that takes no disk
	require.NoError(t, f.Close())
	line := io.MultiReader(strings.NewReader(`{"cf":"default","key":"k","value_base64":"`), &repeated{'A', 200 << 20}, strings.NewReader("\"}\n"))
	for _, c := range []struct {
		name  string
		in    io.Reader
		args  []string
		bound int64
	}{
		{"put from stdin", &repeated{0, 200 << 20}, []string{"put", path, "k", "-"}, 32 << 20},
		{"put --value-file", nil, []string{"put", path, "k", "--value-file", big}, 20 << 20},
		{"import of one line", line, []string{"import", path}, 40 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			rss, r := peakRSSIn(t, c.in, c.args...)
			t.Logf("%v: peak RSS %d MiB: %s", c.args, rss>>20, r.stderr)
			require.NotEqual(t, 0, r.code)
			require.Contains(t, r.stderr, "--max-value-size")
			require.Less(t, rss, c.bound)
		})
	}
}

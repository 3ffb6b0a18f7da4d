//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TestInterruptImport sends SIGINT to an import in the middle of its input
// (a writer goes on writing lines until the import ends, so it cannot have
// finished) and checks that it stops cleanly: exit code 1, a report of
// what was committed, a sound store holding exactly whole batches (or
// nothing, all-or-nothing, the file byte for byte as it was), and the
// column family present before untouched.
func TestInterruptImport(t *testing.T) {
	lines := 200_000
	if testing.Short() {
		lines = 40_000
	}
	for _, batch := range []int{0, 1000} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store.db")
			db, err := kvstore.Open(path, kvstore.Options{})
			require.NoError(t, err)
			require.NoError(t, db.Put([]byte("keep"), []byte("me")))
			require.NoError(t, db.Close())
			before, err := os.ReadFile(path)
			require.NoError(t, err)

			cmd := exec.Command(snkvBin, "import", path, "--json", "--batch", fmt.Sprint(batch))
			cmd.Env = append(os.Environ(), nowEnv+"="+t0.Format(time.RFC3339))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			in, err := cmd.StdinPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())

			// The writer goes on after the signal, until the import is gone:
			// the import can never reach the end of its input (with a
			// fixed input it could, on a loaded machine, import all of it
			// before the signal came).
			var written atomic.Int64
			reached := make(chan struct{})
			go func() {
				w := bufio.NewWriterSize(in, 1<<16)
				for i := 0; i < 9_999_999; i++ {
					if _, err := fmt.Fprintf(w, `{"cf":"big","key":"k%07d","value":"value %d","expire_ms":%d}`+"\n", i, i, t0.Add(time.Hour).UnixMilli()+int64(i)); err != nil {
						return
					}
					if written.Add(1) == int64(lines) {
						if w.Flush() != nil {
							return
						}
						close(reached)
					}
				}
			}()
			<-reached
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			code := interruptAndWait(t, cmd, done)
			in.Close()
			require.Equal(t, 1, code, stderr.String())
			require.Contains(t, stderr.String(), "interrupted")
			requireClean(t, result{stdout.String(), stderr.String(), code})

			var summary struct {
				Imported int64 `json:"imported"`
			}
			require.NoError(t, json.Unmarshal(stdout.Bytes(), &summary), stdout.String())

			if batch == 0 {
				after, err := os.ReadFile(path)
				require.NoError(t, err)
				require.True(t, bytes.Equal(before, after), "an interrupted all-or-nothing import leaves the file as it was (%d bytes, then %d)", len(before), len(after))
			}
			db, err = kvstore.Open(path, kvstore.Options{ReadOnly: true, Clock: kvstore.NewManualClock(t0)})
			require.NoError(t, err)
			defer db.Close()
			require.NoError(t, db.IntegrityCheck(context.Background()))
			v, err := db.Get([]byte("keep"))
			require.NoError(t, err)
			require.Equal(t, []byte("me"), v)
			big, err := db.OpenColumnFamily("big")
			if batch == 0 {
				require.ErrorIs(t, err, kvstore.ErrNotFound, "an all-or-nothing import leaves nothing behind")
				require.Zero(t, summary.Imported)
				return
			}
			require.NoError(t, err)
			n, err := big.Count()
			require.NoError(t, err)
			require.Equal(t, summary.Imported, n, "the report says what was committed")
			require.Positive(t, n)
			require.LessOrEqual(t, n, written.Load())
			require.Zero(t, n%int64(batch), "whole batches only")
			// The committed keys are the first n lines, with their expiries.
			d, err := big.TTL([]byte(fmt.Sprintf("k%07d", n-1)))
			require.NoError(t, err)
			require.Equal(t, time.Hour+time.Duration(n-1)*time.Millisecond, d)
		})
	}
}

// TestInterruptPurge sends SIGINT to a purge of many expired keys once it
// has committed its first batches: it stops at a batch boundary, reports
// exactly what it removed, and leaves a sound store. Slow: skipped under
// -short.
func TestInterruptPurge(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: 200k expired keys")
	}
	const n = 200_000
	path := filepath.Join(t.TempDir(), "store.db")
	// The store is written by the binary (an import an hour before t0 of
	// keys expiring half an hour before t0): quicker than the library in a
	// test binary built with -race.
	var in bytes.Buffer
	for i := range n {
		fmt.Fprintf(&in, `{"cf":"default","key":"k%07d","value":"v","expire_ms":%d}`+"\n", i, t0.Add(-30*time.Minute).UnixMilli())
	}
	fmt.Fprintf(&in, `{"cf":"default","key":"keep","value":"me"}`+"\n")
	r := cliAt(t, t0.Add(-time.Hour), &in, "import", path, "--create")
	require.Equal(t, 0, r.code, r.stderr)
	ctx := context.Background()

	watch, err := kvstore.Open(path, kvstore.Options{ReadOnly: true, Clock: kvstore.NewManualClock(t0)})
	require.NoError(t, err)
	defer watch.Close()

	// Wait until the purge has committed a batch (its WAL grows), then
	// interrupt it. Counting the keys instead takes longer than the whole
	// purge on a loaded machine.
	walSize := func() int64 {
		st, err := os.Stat(path + "-wal")
		if err != nil {
			return 0
		}
		return st.Size()
	}
	before := walSize()
	cmd, stdout, stderr, done := started(t, func(int) bool { return walSize() > before }, "purge", path, "--json")
	code := interruptAndWait(t, cmd, done)
	require.NotZero(t, code, "the purge finished before the signal; stdout: %s", stdout.String())
	require.Equal(t, 1, code, stderr.String())
	require.Contains(t, stderr.String(), "interrupted")

	var rep struct {
		CF     string `json:"cf"`
		Purged int64  `json:"purged"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep), stdout.String())
	require.Positive(t, rep.Purged)
	require.Less(t, rep.Purged, int64(n))
	require.Zero(t, rep.Purged%256, "whole batches of 256")
	require.NoError(t, watch.IntegrityCheck(ctx))
	kc, err := watch.CountKeys(ctx, "default")
	require.NoError(t, err)
	require.Equal(t, kvstore.KeyCounts{Name: "default", Stored: n + 1 - rep.Purged, Live: 1, TTL: n - rep.Purged, Expired: n - rep.Purged}, kc,
		"the report says exactly what was removed")
}

// plainStore writes a store of n keys with the binary (quicker than the
// library in a test binary built with -race) and returns its path.
func plainStore(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "big.db")
	var in bytes.Buffer
	for i := range n {
		fmt.Fprintf(&in, `{"cf":"default","key":"k%07d","value":"value %d"}`+"\n", i, i)
	}
	r := cli(t, &in, "import", path, "--create", "--batch", "50000")
	require.Equal(t, 0, r.code, r.stderr)
	return path
}

// started runs the binary with args and waits until cond holds (the
// command is under way), failing the test if it ends first or never gets
// there.
func started(t *testing.T, cond func(pid int) bool, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer, chan error) {
	t.Helper()
	cmd := exec.Command(snkvBin, args...)
	cmd.Env = append(os.Environ(), nowEnv+"="+t0.Format(time.RFC3339))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("%v ended before it could be interrupted: %v\nstderr: %s", args, err, stderr.String())
		default:
		}
		if cond(cmd.Process.Pid) {
			return cmd, &stdout, &stderr, done
		}
	}
	_ = cmd.Process.Kill()
	t.Fatalf("%v never got under way", args)
	return nil, nil, nil, nil
}

// interruptAndWait sends SIGINT and returns the exit code (waitCode).
func interruptAndWait(t *testing.T, cmd *exec.Cmd, done chan error) int {
	t.Helper()
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	return waitCode(t, cmd, done)
}

// waitCode waits for the interrupted command (done receives its Wait) and
// returns its exit code; it kills the command and fails the test when it
// has not ended within a minute.
func waitCode(t *testing.T, cmd *exec.Cmd, done chan error) int {
	t.Helper()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err == nil {
			return 0
		}
		require.ErrorAs(t, err, &ee)
		return ee.ExitCode()
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the command did not stop after SIGINT")
	}
	return -1
}

// hasOpen reports whether process pid has the file path open (Linux's
// /proc; elsewhere it reports true at once).
func hasOpen(pid int, path string) bool {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return runtime.GOOS != "linux"
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && target == path {
			return true
		}
	}
	return false
}

// TestInterruptExportOut interrupts an export --out once it has written
// part of its output: the command says so (exit code 1), and neither the
// file named by --out nor its temporary file is left behind, so a second
// run starts clean and nothing partial can be mistaken for an export.
func TestInterruptExportOut(t *testing.T) {
	n := 400_000
	if testing.Short() {
		n = 150_000
	}
	path := plainStore(t, n)
	dir := t.TempDir()
	out := filepath.Join(dir, "h.jsonl")
	partial := func(int) bool {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if info, err := e.Info(); err == nil && info.Size() > 0 {
				return true
			}
		}
		return false
	}
	cmd, _, stderr, done := started(t, partial, "export", path, "--out", out)
	code := interruptAndWait(t, cmd, done)
	require.Equal(t, 1, code, stderr.String())
	require.Contains(t, stderr.String(), "interrupted after exporting")
	require.Contains(t, stderr.String(), out+" was not written")
	require.NotContains(t, stderr.String(), "snkv: snkv:")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, ents, "no partial export, under its name or a temporary one")

	r := cli(t, nil, "export", path, "--out", out)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, fmt.Sprintf("exported %d keys", n))
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, n, bytes.Count(b, []byte("\n")))
	ents, err = os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 1, "only the export itself")
}

// TestInterruptCheck interrupts a check: the message says it was
// interrupted, once, with no "context canceled" and no doubled prefix.
func TestInterruptCheck(t *testing.T) {
	path := plainStore(t, 150_000)
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	cmd, stdout, stderr, done := started(t, func(pid int) bool { return hasOpen(pid, abs) }, "check", path)
	code := interruptAndWait(t, cmd, done)
	require.Equal(t, 1, code, "stdout: %s stderr: %s", stdout.String(), stderr.String())
	require.Equal(t, "snkv: interrupted: the check did not finish (it changes nothing)\n", stderr.String())
	require.Empty(t, stdout.String())
}

// TestInterruptScan interrupts a scan of a large column family whose
// output is read slowly: the command stops and reports it (exit 1).
func TestInterruptScan(t *testing.T) {
	path := plainStore(t, 150_000)
	cmd := exec.Command(snkvBin, "scan", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	// The first lines arrive long before the scan ends: the table streams.
	br := bufio.NewReader(out)
	head, err := br.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "KEY       VALUE\n", head)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	go func() { _, _ = io.Copy(io.Discard, br) }()
	require.Equal(t, 1, waitCode(t, cmd, done), stderr.String())
	require.Regexp(t, `^snkv: interrupted after listing \d+ keys\n$`, stderr.String())
}

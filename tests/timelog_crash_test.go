package timelog_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

// The crash test starts a child process that appends, deletes, flushes and
// compacts a log, reporting each operation on stdout before it makes it,
// kills it with SIGKILL at a random moment, and checks the file:
//   - everything flushed before the kill is there, and the log is exactly
//     the state of the last flush that started (if it committed) or of the
//     last that finished: never half a flush;
//   - no record that still exists was reported dropped.

const (
	crashEnvPath  = "TIMELOG_CRASH_PATH"
	crashEnvSeed  = "TIMELOG_CRASH_SEED"
	crashEnvFirst = "TIMELOG_CRASH_FIRST" // first handle the child uses
)

func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnvPath)
	if path == "" {
		t.Skip("runs only as the child process of TestCrashKill")
	}
	go func() { // if the parent goes away, so does the child
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	seed, _ := strconv.ParseUint(os.Getenv(crashEnvSeed), 10, 64)
	h, _ := strconv.ParseUint(os.Getenv(crashEnvFirst), 10, 64)
	say := func(format string, a ...any) { _, _ = os.Stdout.Write(fmt.Appendf(nil, format+"\n", a...)) }
	err := func() error {
		db, err := kvstore.Open(path, sealedOpts(kvstore.Options{}))
		if err != nil {
			return err
		}
		l, err := timelog.Open(db, "crash", timelog.Options{
			Maintenance: timelog.Manual, MemtableMaxBytes: 64 << 20, PageMaxBytes: 8 + 24*40,
			OnDrop: func(r timelog.Record) { say("X %d", r.Handle) },
		})
		if err != nil {
			return err
		}
		rng := rand.New(rand.NewPCG(seed, 7))
		return crashWorkload(ctx, l, rng, say, func() error {
			n := 1 + rng.IntN(60)
			batch := make([]timelog.Record, n)
			for i := range batch {
				h++
				batch[i] = timelog.Record{Ts: int64(rng.IntN(1000)), Handle: h}
				say("A %d %d", batch[i].Ts, h)
			}
			return l.AppendBatch(batch)
		})
	}()
	fmt.Fprintf(os.Stderr, "crash child: %v\n", err)
	os.Exit(3)
}

type crashChild struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	mu    sync.Mutex
	lines []string
	done  chan struct{}
	errb  strings.Builder
}

func startChild(t *testing.T, path string, seed, first uint64) *crashChild {
	return startChildRun(t, "^TestCrashChild$", path, seed, first)
}

// startChildRun starts the child test run (a -test.run pattern).
func startChildRun(t *testing.T, run, path string, seed, first uint64) *crashChild {
	exe, err := os.Executable()
	require.NoError(t, err)
	return startChildRunEnv(t, exe, run, crashEnvPath+"="+path, crashEnvSeed+"="+fmt.Sprint(seed), crashEnvFirst+"="+fmt.Sprint(first))
}

// startChildRunEnv starts the test binary exe as a child running the tests
// run matches, with env added to its environment.
func startChildRunEnv(t *testing.T, exe, run string, env ...string) *crashChild {
	cmd := exec.Command(exe, "-test.run="+run, "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), env...)
	c := &crashChild{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = &c.errb
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	c.stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.mu.Lock()
			c.lines = append(c.lines, sc.Text())
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = c.stdin.Close()
		<-c.done
		_ = cmd.Wait()
	})
	return c
}

// waitFlushes waits until the child has reported n finished flushes.
func (c *crashChild) waitFlushes(t *testing.T, n int) {
	k := 0
	c.waitLine(t, func(l string) bool {
		if l == "F done" {
			k++
		}
		return k >= n
	})
}

// waitLine waits until ok returns true for a line of the child's output
// (each line is passed once).
func (c *crashChild) waitLine(t *testing.T, ok func(line string) bool) {
	deadline := time.Now().Add(time.Minute)
	seen := 0
	for time.Now().Before(deadline) {
		c.mu.Lock()
		found := false
		for ; seen < len(c.lines) && !found; seen++ {
			found = ok(c.lines[seen])
		}
		c.mu.Unlock()
		if found {
			return
		}
		select {
		case <-c.done:
			t.Fatalf("child ended: %s", c.errb.String())
		case <-time.After(2 * time.Millisecond):
		}
	}
	t.Fatal("child made no progress within a minute")
}

func (c *crashChild) kill(t *testing.T) []string {
	require.NoError(t, c.cmd.Process.Kill())
	<-c.done
	require.Error(t, c.cmd.Wait())
	require.Equal(t, -1, c.cmd.ProcessState.ExitCode(), "the child must die by the signal: %s", c.errb.String())
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lines...)
}

func TestCrashKill(t *testing.T) {
	kills := 12
	if testing.Short() {
		kills = 2
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	base := &model{}
	for i := range kills {
		first := uint64(i+1) << 32
		c := startChild(t, path, seed+uint64(i), first)
		c.waitFlushes(t, 1+rng.IntN(3))
		time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond) // a random moment
		lines := c.kill(t)

		atStart, atDone, drops := replayCrashLines(base, lines)
		require.NotNil(t, atDone)

		db, err := kvstore.Open(path, sealedOpts(kvstore.Options{}))
		require.NoError(t, err)
		require.NoError(t, db.IntegrityCheck(ctx))
		l, err := timelog.Open(db, "crash", timelog.Options{Maintenance: timelog.Manual})
		require.NoError(t, err, "the dead child's lock is gone")
		got := collect(t, l.All())
		switch {
		case equalRecs(got, atDone.recs):
			base = atDone
		case equalRecs(got, atStart.recs):
			base = atStart
		default:
			t.Fatalf("kill %d (seed %d): the log is neither the last finished flush (%d records) nor the last started (%d): %d records",
				i, seed, len(atDone.recs), len(atStart.recs), len(got))
		}
		for _, r := range got {
			require.False(t, drops[r.Handle], "kill %d: handle %d reported dropped but still there", i, r.Handle)
		}
		require.NoError(t, l.Close())
		require.NoError(t, db.Close())
		t.Logf("kill %d: %d lines, %d records, %d drops reported", i, len(lines), len(got), len(drops))
	}
}

func equalRecs(a, b []timelog.Record) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// crashWorkload runs the crash children's endless random workload on l:
// appends (by appendSome, which reports them with say), range deletes,
// flushes and compactions, each reported with say before (and, for flushes
// and compactions, after) it happens. It returns only on an error.
func crashWorkload(ctx context.Context, l *timelog.Log, rng *rand.Rand, say func(string, ...any), appendSome func() error) error {
	for {
		switch op := rng.IntN(20); {
		case op < 14:
			if err := appendSome(); err != nil {
				return err
			}
		case op < 16:
			lo := int64(rng.IntN(1000))
			hi := lo + int64(rng.IntN(200))
			say("D %d %d", lo, hi)
			if err := l.DeleteRange(lo, hi); err != nil {
				return err
			}
		case op < 18:
			say("F start")
			if err := l.Flush(ctx); err != nil {
				return err
			}
			say("F done")
		default:
			l.Compact()
			for {
				did, err := l.MaintStep(ctx)
				if err != nil {
					return err
				}
				if !did {
					break
				}
			}
			say("C done")
		}
	}
}

// replayCrashLines replays what a crash child reported (see crashWorkload)
// on a copy of base, and returns the model as it was when the last flush
// started and when the last one finished (nil if none did), and the handles
// reported dropped.
func replayCrashLines(base *model, lines []string) (atStart, atDone *model, drops map[uint64]bool) {
	m := base.clone()
	drops = map[uint64]bool{}
	for _, l := range lines {
		f := strings.Fields(l)
		switch f[0] {
		case "A":
			ts, _ := strconv.ParseInt(f[1], 10, 64)
			h, _ := strconv.ParseUint(f[2], 10, 64)
			m.add(timelog.Record{Ts: ts, Handle: h})
		case "D":
			lo, _ := strconv.ParseInt(f[1], 10, 64)
			hi, _ := strconv.ParseInt(f[2], 10, 64)
			if lo < hi {
				m.del(lo, hi-1)
			}
		case "F":
			if f[1] == "start" {
				atStart = m.clone()
			} else {
				atDone = m.clone()
			}
		case "X":
			h, _ := strconv.ParseUint(f[1], 10, 64)
			drops[h] = true
		}
	}
	return atStart, atDone, drops
}

package testutil

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ChildEnv is the environment variable that marks a child process: it holds
// the name of the test the child was started to run (ChildOnly reads it).
const ChildEnv = "SNKV_TEST_CHILD"

// LineWait is how long Child.WaitLine waits for a line before it fails the
// test.
const LineWait = 3 * time.Minute

// ChildCommand returns a command that runs this test binary again as a
// child process running only the top-level test named test, verbosely and
// once (-test.v, -test.count=1), with env ("NAME=value") added to this
// process's environment and ChildEnv set to test. ctx ends the child as
// exec.CommandContext does. The caller may change the command before it
// starts it: its I/O, its SysProcAttr, or its Path to run a copy of the
// binary. It fails t when the binary's path cannot be found.
//
// The child's body is a test that calls ChildOnly first; it takes its
// parameters from env, and reports to the parent on stdout. With -test.v
// the testing package's own lines ("=== RUN", "--- PASS: ...") and the
// child's t.Log lines are on stdout too.
func ChildCommand(ctx context.Context, t testing.TB, test string, env ...string) *exec.Cmd {
	t.Helper()
	return rerun(ctx, t, "^"+test+"$", append(env, ChildEnv+"="+test))
}

// NoTestCommand returns a command that runs this test binary again running
// no test (-test.run=^$), with env added to this process's environment: a
// process that only starts and ends (its id is then one of a process that
// has exited), or a child whose body is the package's TestMain, which reads
// env to know what to do. ctx and changes to the command are as for
// ChildCommand.
func NoTestCommand(ctx context.Context, t testing.TB, env ...string) *exec.Cmd {
	t.Helper()
	return rerun(ctx, t, "^$", env)
}

// rerun returns a command that runs this test binary with -test.run=run.
func rerun(ctx context.Context, t testing.TB, run string, env []string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err, "the test binary's path")
	cmd := exec.CommandContext(ctx, exe, "-test.run="+run, "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// ChildOnly skips t unless this process is a child started to run it
// (ChildCommand, RunChild, StartChild): run directly, a child's body does
// nothing.
func ChildOnly(t testing.TB) {
	t.Helper()
	if !IsChild(t) {
		t.Skip("runs only as a child process of another test")
	}
}

// IsChild reports whether this process is a child started to run t (a test
// that re-runs itself as a child tells the two runs apart with it).
func IsChild(t testing.TB) bool { return os.Getenv(ChildEnv) == t.Name() }

// RunChild runs test in a child process (ChildCommand) until it exits, and
// returns what it wrote to stdout and stderr, interleaved, and the error of
// its run (nil when it exited with status 0). ctx ends the child as
// exec.CommandContext does.
func RunChild(ctx context.Context, t testing.TB, test string, env ...string) ([]byte, error) {
	t.Helper()
	return ChildCommand(ctx, t, test, env...).CombinedOutput()
}

// Child is a running child process (StartChild): its stdout is read line
// by line as it writes, its stderr kept for failure messages, and its stdin
// is a pipe from this process, closed when the test ends (a child that
// reads its stdin to the end can so exit when its parent goes away).
type Child struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr SyncBuffer
	done   chan struct{} // closed when stdout is at its end

	mu     sync.Mutex
	lines  []string
	next   int           // the first line WaitLine has not passed
	notify chan struct{} // a token when a line arrives
}

// StartChild starts test in a child process (ChildCommand, with
// context.Background()) with env added to its environment. The child is
// killed, if it still runs, when t ends.
func StartChild(t testing.TB, test string, env ...string) *Child {
	t.Helper()
	c := &Child{t: t, cmd: ChildCommand(context.Background(), t, test, env...), done: make(chan struct{}), notify: make(chan struct{}, 1)}
	c.cmd.Stderr = &c.stderr
	out, err := c.cmd.StdoutPipe()
	require.NoError(t, err)
	c.stdin, err = c.cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, c.cmd.Start(), "start the child %s", test)
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			c.mu.Lock()
			c.lines = append(c.lines, sc.Text())
			c.mu.Unlock()
			select {
			case c.notify <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		_ = c.stdin.Close()
		<-c.done
		_ = c.cmd.Wait()
	})
	return c
}

// Send writes line and a newline to the child's stdin.
func (c *Child) Send(line string) error {
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		return fmt.Errorf("write to the child: %w; stderr:\n%s", err, c.stderr.String())
	}
	return nil
}

// WaitLine waits until the child writes a line for which match is true and
// returns it (Await); it fails the test when the child ends first or no
// line matches within LineWait. Call it from the test's goroutine; other
// goroutines call Await.
func (c *Child) WaitLine(match func(line string) bool) string {
	c.t.Helper()
	l, err := c.Await(match)
	require.NoError(c.t, err)
	return l
}

// Await waits until the child writes a line for which match is true and
// returns it. Each line is passed to match once: a later Await starts after
// the line an earlier one returned. It returns an error when the child ends
// first or no line matches within LineWait.
func (c *Child) Await(match func(line string) bool) (string, error) {
	deadline := time.NewTimer(LineWait)
	defer deadline.Stop()
	for {
		if l, ok := c.scan(match); ok {
			return l, nil
		}
		select {
		case <-c.notify:
		case <-c.done:
			if l, ok := c.scan(match); ok {
				return l, nil
			}
			return "", fmt.Errorf("the child ended before the line waited for; stderr:\n%s", c.stderr.String())
		case <-deadline.C:
			return "", fmt.Errorf("the child wrote no line waited for within %v; stderr:\n%s", LineWait, c.stderr.String())
		}
	}
}

// scan passes the lines not yet passed to match, and returns the first it
// is true for.
func (c *Child) scan(match func(string) bool) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.next < len(c.lines) {
		l := c.lines[c.next]
		c.next++
		if match(l) {
			return l, true
		}
	}
	return "", false
}

// WaitFor waits (WaitLine) for the line want.
func (c *Child) WaitFor(want string) {
	c.t.Helper()
	c.WaitLine(func(l string) bool { return l == want })
}

// Kill ends the child with SIGKILL and returns every line it wrote. It
// fails the test unless the kill is what ended the child (a child that
// ended on its own, or with an error, did not run to the kill).
func (c *Child) Kill() []string {
	c.t.Helper()
	lines, signalled := c.KillIfRunning()
	require.True(c.t, signalled, "the child must die by the kill, not end on its own; stderr:\n%s", c.stderr.String())
	return lines
}

// KillIfRunning ends the child with SIGKILL if it still runs, and returns
// every line it wrote and whether the kill ended it (false when it had
// ended on its own).
func (c *Child) KillIfRunning() (lines []string, signalled bool) {
	c.t.Helper()
	err := c.cmd.Process.Kill()
	if err != nil && !errors.Is(err, os.ErrProcessDone) {
		require.NoError(c.t, err, "kill the child")
	}
	<-c.done
	_ = c.cmd.Wait()
	return c.Lines(), c.cmd.ProcessState.ExitCode() == -1
}

// Wait closes the child's stdin, waits until it exits, and returns every
// line it wrote and the error of its run (nil when it exited with status
// 0).
func (c *Child) Wait() ([]string, error) {
	_ = c.stdin.Close()
	<-c.done
	err := c.cmd.Wait()
	if err != nil {
		err = fmt.Errorf("%w; stderr:\n%s", err, c.stderr.String())
	}
	return c.Lines(), err
}

// Lines returns a copy of every line the child has written so far.
func (c *Child) Lines() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lines...)
}

// Stderr returns what the child has written to stderr so far.
func (c *Child) Stderr() string { return c.stderr.String() }

// SyncBuffer is a bytes.Buffer safe for one writer (a child process, a
// goroutine) and any readers. The zero value is ready to use.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Bytes returns a copy of what was written so far.
func (b *SyncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

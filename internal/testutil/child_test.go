package testutil_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/stretchr/testify/require"
)

const echoEnv = "TESTUTIL_ECHO" // what TestEchoChild does

// TestEchoChild is the child of the tests below. By echoEnv: "say" prints
// the value of TESTUTIL_WORD and ends; "echo" prints "got X" for each line X
// of its stdin until it ends, then "bye"; "fail" fails.
func TestEchoChild(t *testing.T) {
	testutil.ChildOnly(t)
	require.True(t, testutil.IsChild(t))
	switch os.Getenv(echoEnv) {
	case "say":
		fmt.Println("word " + os.Getenv("TESTUTIL_WORD"))
	case "echo":
		fmt.Println("ready")
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			fmt.Println("got " + in.Text())
		}
		fmt.Println("bye")
	case "fail":
		t.Fatal("asked to fail")
	default:
		t.Fatalf("unknown %s %q", echoEnv, os.Getenv(echoEnv))
	}
}

// A child runs only the test it is started for, with the environment it is
// given; the parent is no child.
func TestRunChild(t *testing.T) {
	require.False(t, testutil.IsChild(t))
	out, err := testutil.RunChild(context.Background(), t, "TestEchoChild", echoEnv+"=say", "TESTUTIL_WORD=hello")
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "word hello\n")
	require.Contains(t, string(out), "--- PASS: TestEchoChild")
	require.NotContains(t, string(out), "TestRunChild", "the child runs no other test")

	out, err = testutil.RunChild(context.Background(), t, "TestEchoChild", echoEnv+"=fail")
	require.Error(t, err)
	require.Contains(t, string(out), "asked to fail")
}

// Lines sent reach the child's stdin, the lines it writes are waited for
// in order, and a kill ends it by the signal.
func TestStartChildLinesAndKill(t *testing.T) {
	c := testutil.StartChild(t, "TestEchoChild", echoEnv+"=echo")
	c.WaitFor("ready")
	for i := range 3 {
		require.NoError(t, c.Send(fmt.Sprint("line ", i)))
	}
	require.Equal(t, "got line 1", c.WaitLine(func(l string) bool { return strings.HasSuffix(l, "1") }))
	// Lines before the one returned are not passed again.
	l, err := c.Await(func(l string) bool { return l == "got line 0" || l == "got line 2" })
	require.NoError(t, err)
	require.Equal(t, "got line 2", l)
	require.Contains(t, c.Lines(), "got line 0")
	lines := c.Kill()
	require.Contains(t, lines, "got line 2")
	require.NotContains(t, lines, "bye", "killed before its stdin ended")
}

// A child that ends on its own: Wait returns its lines, and
// KillIfRunning says the kill did not end it.
func TestChildEndsOnItsOwn(t *testing.T) {
	c := testutil.StartChild(t, "TestEchoChild", echoEnv+"=echo")
	require.NoError(t, c.Send("x"))
	lines, err := c.Wait()
	require.NoError(t, err)
	require.Contains(t, lines, "got x")
	require.Contains(t, lines, "bye")
	_, signalled := c.KillIfRunning()
	require.False(t, signalled)

	c = testutil.StartChild(t, "TestEchoChild", echoEnv+"=fail")
	_, err = c.Wait()
	require.Error(t, err)
	_, err = c.Await(func(string) bool { return false })
	require.ErrorContains(t, err, "ended before the line")
}

// A run of no test starts and ends, running none of the package's tests.
func TestNoTestCommand(t *testing.T) {
	out, err := testutil.NoTestCommand(context.Background(), t, "TESTUTIL_WORD=unused").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NotContains(t, string(out), "=== RUN")
	require.Contains(t, string(out), "testing: warning: no tests to run")
}

package testutil

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ShellWait is how long one run of the sqlite3 shell may take.
const ShellWait = time.Minute

// SQLite3 returns the path of the stock sqlite3 command-line shell. When
// there is none on the PATH the test is skipped, saying so, except under
// CI=true, where it fails: CI installs the shell (.ci/run), so a missing
// one there is a broken setup, never a reason to pass.
func SQLite3(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("sqlite3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("sqlite3 is not on the PATH (required under CI=true): %v", err)
		}
		t.Skipf("sqlite3 is not on the PATH: %v", err)
	}
	return p
}

// RunShell runs the sqlite3 shell (SQLite3) with args, input on its stdin
// (a newline added), and returns what it wrote to stdout and stderr, and
// the error of its run (nil when it exited with status 0). A run longer
// than ShellWait is ended and returns an error.
func RunShell(t testing.TB, input string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ShellWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, SQLite3(t), args...)
	cmd.Stdin = strings.NewReader(input + "\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// Shell runs the sqlite3 shell as RunShell does and returns the lines it
// wrote to stdout (none for no output); it fails the test when the shell
// fails or writes anything to stderr.
func Shell(t testing.TB, input string, args ...string) []string {
	t.Helper()
	out, errs, err := RunShell(t, input, args...)
	require.NoError(t, err, "sqlite3 %s <<< %q: %s", strings.Join(args, " "), input, errs)
	require.Empty(t, errs, "sqlite3 %s wrote to stderr for %q", strings.Join(args, " "), input)
	text := strings.TrimRight(out, "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

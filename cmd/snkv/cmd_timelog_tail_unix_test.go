//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTimelogTailFollow follows a log while another process appends to it:
// tail -f prints the records flushed after it started, at or after the
// last timestamp shown, and Ctrl-C ends it with exit code 0.
func TestTimelogTailFollow(t *testing.T) {
	path := logFixture(t)
	cmd := exec.Command(snkvBin, "timelog", "tail", path, "cpu", "-n", "2", "-f")
	cmd.Env = append(os.Environ(), nowEnv+"="+t0.Format(time.RFC3339))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		done <- cmd.Wait()
	}()
	next := func() string {
		select {
		case l := <-lines:
			return l
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("no line from tail -f; stderr: %s", stderr.String())
		}
		return ""
	}
	require.Equal(t, "TS             HANDLE", next())
	require.Equal(t, "1893553453000  108", next())
	require.Equal(t, "1893553454000  109", next())

	// Another process appends: one record at the last timestamp shown, one
	// later, and one older (out of order: not followed).
	r := cli(t, strings.NewReader("1893553454000 110\n1893553460000 111\n1893553400000 112\n"), "timelog", "append", path, "cpu")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "1893553454000  110", next())
	require.Equal(t, "1893553460000  111", next())
	r = cli(t, nil, "timelog", "append", path, "cpu", "1893553470000", "113")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "1893553470000  113", next())

	// Following holds no read transaction between polls, so the writer's
	// checkpoints can empty the WAL meanwhile.
	r = cli(t, nil, "checkpoint", path, "--mode", "truncate", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `"busy":false`)

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	for l := range lines {
		t.Errorf("unexpected line %q", l)
	}
	require.NoError(t, <-done, stderr.String())
	require.Empty(t, stderr.String())
}

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

// TestGoldenTimelogWrite appends to logs, deletes and compacts, from the
// arguments and from stdin, for a log of handles and a values log.
func TestGoldenTimelogWrite(t *testing.T) {
	path := logFixture(t)
	runGolden(t, path, []step{
		{name: "tlw-append-missing", args: "timelog append FILE mem 1 10", code: 3},
		{name: "tlw-append-create", args: "timelog append FILE mem 1 10 --create"},
		{name: "tlw-append-stdin", args: "timelog append FILE mem --json", stdin: "2 20\n3\t30\n\n4 40\r\n"},
		{name: "tlw-append-bad-handle", args: "timelog append FILE mem 5 x", code: 2},
		{name: "tlw-append-bad-line", args: "timelog append FILE mem", stdin: "6 60\n7\n", code: 2},
		{name: "tlw-append-half", args: "timelog append FILE mem 5", code: 2},
		{name: "tlw-range", args: "timelog range FILE mem"},
		{name: "tlw-values-create", args: "timelog append FILE ev --create --values --time-unit s 2030-01-02T03:04:05Z disk-full"},
		{name: "tlw-values-existing", args: "timelog append FILE mem --create --values 9 x", code: 2},
		{name: "tlw-values-stdin", args: "timelog append FILE ev", stdin: "1893553446\tnaïve\ttab\n1893553447 two words\n"},
		{name: "tlw-values-range", args: "timelog range FILE ev --time-unit s"},
		{name: "tlw-values-json", args: "timelog range FILE ev --reverse --json"},
		{name: "tlw-values-tail", args: "timelog tail FILE ev -n 2 --escape"},
		{name: "tlw-delete-before", args: "timelog delete-before FILE cpu 1893553450000"},
		{name: "tlw-delete-before-rfc3339", args: "timelog delete-before FILE mem --time-unit ms 1970-01-01T00:00:00.003Z --json"},
		{name: "tlw-compact", args: "timelog compact FILE cpu"},
		{name: "tlw-ls-after", args: "timelog ls FILE"},
		{name: "tlw-compact-missing", args: "timelog compact FILE nope", code: 3},
		{name: "tlw-usage-ls-time-unit", args: "timelog ls FILE --time-unit s", code: 2},
		{name: "tlw-usage-bad-ts", args: "timelog append FILE mem soon 1", code: 2},
	})
}

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

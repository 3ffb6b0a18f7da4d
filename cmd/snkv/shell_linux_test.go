//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// waitEcho waits until the terminal has shown the shell's prompt n times.
func (s *terminal) waitPrompt(n int) {
	s.t.Helper()
	s.waitFor(fmt.Sprintf("prompt %d", n), func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return strings.Count(s.echoed.String(), "snkv> ") >= n
	})
}

// typeLines types each line once the prompt for it is shown (the first
// at prompt from).
func (s *terminal) typeLines(from int, lines ...string) int {
	s.t.Helper()
	for _, l := range lines {
		s.waitPrompt(from)
		_, err := io.WriteString(s.master, l)
		require.NoError(s.t, err)
		from++
	}
	return from
}

// TestShellOnTerminal runs a session on a terminal: the store of an
// encrypted store's password is asked once, for the whole session; the
// line can be edited (a backspace, Ctrl-A to the start), Up brings back
// the line before, Ctrl-C drops the line being typed, and Ctrl-D ends the
// shell; the history is kept in its file, without a secret given as a
// flag's value.
func TestShellOnTerminal(t *testing.T) {
	path := fixture(t)
	r := cli(t, nil, with([]string{"encrypt", path, "--password-file", secretFile(t, "pw\n")}, cheapKDF...)...)
	require.Equal(t, 0, r.code, r.stderr)
	hist := filepath.Join(t.TempDir(), "history")
	s := onPTY(t, []string{"SNKV_HISTORY=" + hist}, "shell", path)
	s.answer("Password for "+path+": ", "pw")
	s.typeLines(1,
		"put k v\r",
		"get kx\x7f\r",         // a backspace: get k
		"\x1b[A\r",             // Up: get k again
		"user:1\x01get \r",     // Ctrl-A: get user:1
		"get user:2\x03",       // Ctrl-C: dropped
		"get k --password x\r", // refused, and not kept
		"\x04",                 // Ctrl-D
	)
	r = s.wait("pw")
	require.Equal(t, "v\nv\nalice\n", r.stdout, r.stderr)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, 1, strings.Count(r.stderr, "Password for "), "the password is asked once: %s", r.stderr)
	require.Contains(t, r.stderr, "--password is refused")
	require.NotContains(t, r.stderr, "user:2")
	b, err := os.ReadFile(hist)
	require.NoError(t, err)
	require.Equal(t, "put k v\nget k\nget user:1\n", string(b))
	fi, err := os.Stat(hist)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// TestShellInterruptCommand sends SIGINT while a command of the shell
// runs (timelog tail -f, which runs until then): the command stops, and
// the shell goes on with the next line.
func TestShellInterruptCommand(t *testing.T) {
	path := logFixture(t)
	cmd := snkvCmd(t0, "shell", path)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	_, err = io.WriteString(in, "timelog tail cpu -n 1 -f\n")
	require.NoError(t, err)
	buf := make([]byte, 4096)
	var got strings.Builder
	for !strings.Contains(got.String(), "1893553454000") {
		n, err := out.Read(buf)
		require.NoError(t, err, "stderr: %s", stderr.String())
		got.Write(buf[:n])
	}
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	_, err = io.WriteString(in, "get user:1\nexit\n")
	require.NoError(t, err)
	require.NoError(t, in.Close())
	rest, err := io.ReadAll(out)
	require.NoError(t, err)
	require.NoError(t, cmd.Wait(), stderr.String())
	require.Equal(t, "alice\n", string(rest), "the shell went on after the command it stopped")
	require.Empty(t, stderr.String())
}

// TestShellLongLineOnTerminal: a line typed or pasted on a terminal holds
// at most 4,096 characters (the line editor drops the rest as they come);
// a line that reached that length is refused, not run cut short. Before,
// a put of a 5,000-byte value stored its first 4,086 bytes with exit
// code 0.
func TestShellLongLineOnTerminal(t *testing.T) {
	path := fixture(t)
	s := onPTY(t, []string{"SNKV_HISTORY="}, "shell", path)
	s.typeLines(1,
		"put long "+strings.Repeat("x", 5000)+"\r",
		"put short "+strings.Repeat("y", 4000)+"\r",
		"\x04",
	)
	r := s.wait()
	require.Equal(t, 0, r.code, r.stderr)
	got := cli(t, nil, "get", path, "long")
	require.Equal(t, 3, got.code, "the cut line was not run: %d bytes stored", len(got.stdout))
	require.Contains(t, r.stderr, "4096 characters")
	require.Contains(t, r.stderr, "(exit 2)")
	got = cli(t, nil, "get", path, "short")
	require.Equal(t, 0, got.code, got.stderr)
	require.Equal(t, strings.Repeat("y", 4000), got.stdout, "a shorter line runs whole")
}

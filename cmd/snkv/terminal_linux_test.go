//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// onTerminal runs the binary with its stdin, stdout and stderr on a
// pseudo-terminal (util-linux script(1)) and returns what the terminal
// showed, with the terminal's \r\n turned back into \n.
func onTerminal(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return onTerminalIn(t, dir, "", args...)
}

// onTerminalIn is onTerminal with stdin from the shell redirection in
// ("< file", "" for the terminal), stdout and stderr on the terminal.
func onTerminalIn(t *testing.T, dir, in string, args ...string) string {
	t.Helper()
	quoted := []string{snkvBin}
	for _, a := range args {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return onTerminalShell(t, dir, strings.Join(quoted, " ")+" "+in)
}

// onTerminalShell runs the shell command line on a terminal.
func onTerminalShell(t *testing.T, dir, line string) string {
	t.Helper()
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Skip("needs script(1) to run the command on a terminal")
	}
	cmd := exec.Command(scriptBin, "-qec", line, "/dev/null")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), nowEnv+"="+t0.Format(time.RFC3339), "TERM=dumb")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), out.String())
	return strings.ReplaceAll(out.String(), "\r\n", "\n")
}

// TestGetOnTerminal shows a value on a terminal as text: valid UTF-8 as
// it is, what cannot be shown escaped, and a newline; --escape keeps the
// ASCII-only escaping.
func TestGetOnTerminal(t *testing.T) {
	path := fixture(t)
	dir := filepath.Dir(path)
	r := cli(t, nil, "put", path, "naïve", "na\xc3\xafve\x07\xff\u202e")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "na\xc3\xafve\\x07\\xff\\xe2\\x80\\xae\n", onTerminal(t, dir, "get", path, "naïve"))
	require.Equal(t, "na\\xc3\\xafve\\x07\\xff\\xe2\\x80\\xae\n", onTerminal(t, dir, "get", path, "naïve", "--escape"))
	require.Equal(t, "caf\xc3\xa9\n", onTerminal(t, dir, "get", path, `back\slash`))
	// The same value to a pipe: its exact bytes.
	r = cli(t, nil, "get", path, "naïve")
	require.Equal(t, "na\xc3\xafve\x07\xff\u202e", r.stdout)
}

// TestImportProgressOnTerminal imports a file given with --in on a
// terminal: the progress bar shows the share of the file read.
func TestImportProgressOnTerminal(t *testing.T) {
	dir := t.TempDir()
	var in bytes.Buffer
	for i := range 50_000 {
		fmt.Fprintf(&in, `{"cf":"default","key":"k%07d","value":"value %d"}`+"\n", i, i)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "in.jsonl"), in.Bytes(), 0o644))
	shown := onTerminal(t, dir, "import", "new.db", "--create", "--in", "in.jsonl")
	require.Regexp(t, `importing +\d+%`, shown)
	require.Contains(t, shown, "total          50000")
}

// TestTimelogAppendProgressOnTerminal appends records from a file and from
// a pipe with stderr on a terminal: the bar shows the share of the file
// read, or the records appended from the pipe, and is cleared at the end.
func TestTimelogAppendProgressOnTerminal(t *testing.T) {
	dir := t.TempDir()
	b, err := io.ReadAll(&recordLines{n: 300_000})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "in.txt"), b, 0o644))
	shown := onTerminalIn(t, dir, "< in.txt", "timelog", "append", "new.db", "l", "--create", "--json")
	require.Regexp(t, `appending +\d+%`, shown)
	require.Contains(t, shown, `{"appended":300000,"log":"l"}`)
	shown = onTerminalShell(t, dir, "cat in.txt | "+snkvBin+" timelog append new.db l --json")
	require.Regexp(t, `appending .*\d+ records`, shown)
	require.Contains(t, shown, `{"appended":300000,"log":"l"}`)
}

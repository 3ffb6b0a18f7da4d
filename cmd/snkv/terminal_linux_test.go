//go:build linux

package main

import (
	"bytes"
	"fmt"
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
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Skip("needs script(1) to run the command on a terminal")
	}
	quoted := []string{snkvBin}
	for _, a := range args {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	cmd := exec.Command(scriptBin, "-qec", strings.Join(quoted, " "), "/dev/null")
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

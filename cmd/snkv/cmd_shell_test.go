package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShellScript runs a session from stdin: the commands run on the store
// the shell opened, with the arguments split as a shell splits them; a
// command's failure is reported and the session goes on; the shell's exit
// code is the last command's.
func TestShellScript(t *testing.T) {
	path := fixture(t)
	runSteps(t, path)
	r := cli(t, strings.NewReader("put k v\n"), "shell", filepath.Join(t.TempDir(), "new.db"), "--create")
	require.Equal(t, 0, r.code, r.stderr)
}

// TestSplitLine splits lines as a POSIX shell does, without expansions.
func TestSplitLine(t *testing.T) {
	for in, want := range map[string][]string{
		`get a b`:                  {"get", "a", "b"},
		`  put  "a b"  'c d'  `:    {"put", "a b", "c d"},
		`put k "say \"hi\" \\ \n"`: {"put", "k", `say "hi" \ \n`},
		`put k 'no \escape'`:       {"put", "k", `no \escape`},
		`put k a\ b\'c`:            {"put", "k", "a b'c"},
		`put k ''`:                 {"put", "k", ""},
		`put k x"y z"'w'`:          {"put", "k", "xy zw"},
		`# all comment`:            nil,
		`get k # trailing comment`: {"get", "k"},
		`get k#not-a-comment`:      {"get", "k#not-a-comment"},
	} {
		got, err := splitLine(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{`get 'a`, `get "a`, `get "a\"`} {
		_, err := splitLine(bad)
		require.Error(t, err, bad)
	}
}

// TestShellHistory keeps lines, not empty ones, repeats or secrets.
func TestShellHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hist")
	h := loadHistory(path)
	for _, l := range []string{"get a", "get a", "", "  ", "scan", "get k --password hunter2", "get k --password-file pw.txt"} {
		h.Add(l)
	}
	require.Equal(t, 3, h.Len())
	require.Equal(t, "get k --password-file pw.txt", h.At(0))
	require.Equal(t, "get a", h.At(2))
	require.NoError(t, h.save())
	h = loadHistory(path)
	require.Equal(t, []string{"get a", "scan", "get k --password-file pw.txt"}, h.lines)
}

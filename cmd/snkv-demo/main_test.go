package main

import (
	"bufio"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/stretchr/testify/require"
)

// runDemo runs the demo and returns what it printed.
func runDemo(t *testing.T) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	stdout := os.Stdout
	os.Stdout = w
	out := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		out <- string(b)
	}()
	err = run()
	os.Stdout = stdout
	require.NoError(t, w.Close())
	text := <-out
	require.NoError(t, err, text)
	return text
}

// The demo's ".tables would list" line names exactly what the sqlite3 shell
// lists for the file, which the demo then runs for real: the hidden meta
// table included. Before, the demo built the list by hand and left
// __snkv_meta out.
func TestDemoListsWhatTheShellLists(t *testing.T) {
	testutil.SQLite3(t) // the demo runs the shell it finds on the PATH
	text := runDemo(t)
	var would, real []string
	sc := bufio.NewScanner(strings.NewReader(text))
	section := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "== "):
			section = line
		case strings.TrimSpace(line) == "would list:" && sc.Scan():
			would = strings.Fields(sc.Text())
		case section == "== the real sqlite3 shell" && strings.HasSuffix(line, " .tables"):
			for sc.Scan() && !strings.HasPrefix(strings.TrimSpace(sc.Text()), "$ ") {
				real = append(real, strings.Fields(sc.Text())...)
			}
		}
	}
	require.NotEmpty(t, would, text)
	require.NotEmpty(t, real, text)
	slices.Sort(real)
	require.Equal(t, real, would)
	require.Contains(t, would, "__snkv_meta")
}

package main

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNegativesPositional moves the arguments from the first negative
// number on after "--", leaving flags and their values, the command's
// path and the order of its arguments as they were.
func TestNegativesPositional(t *testing.T) {
	root := newApp(nil, io.Discard, io.Discard).rootCommand()
	for _, c := range []struct{ in, want string }{
		{"timelog append a.db l -5 10", "timelog append a.db l -- -5 10"},
		{"timelog append --json a.db l -5 -10 --create", "timelog append --json --create a.db l -- -5 -10"},
		{"timelog range a.db l --start -10 --end -1", "timelog range a.db l --start -10 --end -1"},
		{"timelog tail a.db l -n 5", "timelog tail a.db l -n 5"},
		{"timelog delete-before a.db l -1 --time-unit s", "timelog delete-before --time-unit s a.db l -- -1"},
		{"timelog append a.db l -- -5 10", "timelog append a.db l -- -5 10"},
		{"get a.db k", "get a.db k"},
		{"--version", "--version"},
	} {
		require.Equal(t, strings.Fields(c.want), negativesPositional(root, strings.Fields(c.in)), c.in)
	}
}

package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTableQuoting shows keys with spaces, keys that start with a quote
// and empty values in quotes where another column follows, so that a
// table reads back unambiguously; the last column is shown as it is.
func TestTableQuoting(t *testing.T) {
	path := fixture(t)
	for _, kv := range [][2]string{{"a b", "two words"}, {`"q`, `say "hi"`}, {"plain", ""}} {
		r := cli(t, nil, "put", path, "--cf", "empty", kv[0], kv[1], "--ttl", "1h")
		require.Equal(t, 0, r.code, r.stderr)
	}
	runSteps(t, path)
	r := cli(t, nil, "get", path, "--cf", "empty", "a b", `"q`, "plain")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "KEY    VALUE\n\"a b\"  two words\n\"\\\"q\"  say \"hi\"\nplain  \n", r.stdout)
	r = cli(t, nil, "cf", "create", path, "my sessions")
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "ls", path)
	require.Contains(t, r.stdout, "\n\"my sessions\"  0     0         0\n")
}

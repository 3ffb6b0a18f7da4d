package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVersion prints the module and the SQLite version compiled in.
func TestVersion(t *testing.T) {
	r := cli(t, nil, "--version")
	require.Equal(t, 0, r.code, r.stderr)
	ls := lines(r.stdout)
	require.Len(t, ls, 3, r.stdout)
	require.True(t, strings.HasPrefix(ls[0], "snkv: github.com/snkv-go/snkv "), ls[0])
	require.Regexp(t, `^SQLite 3\.\d+\.\d+ \(modernc\.org/sqlite v\d+\.\d+\.\d+, pure Go\)$`, ls[1])
	require.Regexp(t, `^go1\.\d+`, ls[2])
}

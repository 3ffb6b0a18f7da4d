package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLs lists the column families with their key counts.
func TestLs(t *testing.T) {
	runSteps(t, fixture(t))
}

// TestLsWithLogs lists the time-series logs after the column families.
func TestLsWithLogs(t *testing.T) {
	runSteps(t, logFixture(t))
}

// TestLsEncrypted lists an encrypted store without its secret: the column
// families and their counts, which are stored in the clear, and a note
// that the logs need the secret (it used to fail with exit code 5); the
// file is unchanged. Given the secret, ls lists the logs too.
func TestLsEncrypted(t *testing.T) {
	path := logFixture(t)
	keyFile := secretFile(t, strings.Repeat("k", 32))
	plain := cli(t, nil, "ls", path)
	require.Equal(t, 0, plain.code, plain.stderr)
	r := cli(t, nil, "encrypt", path, "--key-file", keyFile)
	require.Equal(t, 0, r.code, r.stderr)
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	r = cli(t, nil, "ls", path)
	require.Equal(t, 0, r.code, r.stderr)
	cfTable, _, _ := strings.Cut(plain.stdout, "\n\n")
	require.Equal(t, cfTable+"\n", r.stdout, "the column families and counts, as in the clear")
	require.Equal(t, "snkv: note: "+path+" is encrypted and no password or key was given: column families and counts only (the time-series logs need the secret)\n", r.stderr)
	r = cli(t, nil, "ls", path, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Len(t, jsonLines(t, r.stdout), 3)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(before, after), "listing without the secret writes nothing (%d bytes, then %d)", len(before), len(after))
	if fi, err := os.Stat(path + "-wal"); err == nil {
		require.Zero(t, fi.Size(), "nor into the WAL")
	}

	r = cli(t, nil, "ls", path, "--key-file", keyFile)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, plain.stdout, r.stdout)
	require.Empty(t, r.stderr)
}

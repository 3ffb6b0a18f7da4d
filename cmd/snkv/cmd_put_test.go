package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TestPut writes values from the arguments, stdin and files, with TTLs.
func TestPut(t *testing.T) {
	path := fixture(t)
	require.NoError(t, os.WriteFile(filepath.Join(filepath.Dir(path), "value.bin"), []byte("\x00\x01bytes\xfe"), 0o644))
	runSteps(t, path)
}

// TestPutValueLimit refuses a value one byte over the limit (10 MiB, or
// --max-value-size) from stdin or --value-file, and takes one of exactly
// the limit; the store is left as it was.
func TestPutValueLimit(t *testing.T) {
	path := fixture(t)
	dir := filepath.Dir(path)
	const limit = 10 << 20
	at, over := bytes.Repeat([]byte("v"), limit), bytes.Repeat([]byte("v"), limit+1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "over.bin"), over, 0o644))

	r := cli(t, bytes.NewReader(at), "put", path, "at", "-")
	require.Equal(t, 0, r.code, r.stderr)
	before := storeBytes(t, path)
	for _, c := range []struct {
		name  string
		in    []byte
		args  []string
		limit string
	}{
		{"stdin", over, []string{"k", "-"}, "10485760"},
		{"value file", nil, []string{"k", "--value-file", filepath.Join(dir, "over.bin")}, "10485760"},
		{"value file from stdin", over, []string{"k", "--value-file", "-"}, "10485760"},
		{"flag", at, []string{"k", "-", "--max-value-size", "1MiB"}, "1048576"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := cli(t, bytes.NewReader(c.in), append([]string{"put", path}, c.args...)...)
			require.Equal(t, exitUsage, r.code, r.stderr)
			require.Contains(t, r.stderr, "value too large: more than "+c.limit+" bytes")
			require.Contains(t, r.stderr, "--max-value-size")
			requireClean(t, r)
			require.Equal(t, before, storeBytes(t, path), "the store is unchanged")
		})
	}

	r = cli(t, bytes.NewReader(over), "put", path, "big", "-", "--max-value-size", "11MiB")
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "get", path, "big")
	require.Equal(t, 0, r.code, r.stderr)
	require.Len(t, r.stdout, limit+1)

	for _, bad := range []string{"0", "-1", "ten", "1TiB", "2000000000"} {
		r = cli(t, nil, "put", path, "k", "v", "--max-value-size", bad)
		require.Equal(t, exitUsage, r.code, "%s: %s", bad, r.stderr)
	}
	r = cli(t, nil, "get", path, "k", "--max-value-size", "1MiB")
	require.Equal(t, exitUsage, r.code, "a reader does not take the flag")
}

// TestBusyTimeout holds the store's write lock: put gives up after
// --busy-timeout, well before the default 5 s, saying the store is
// locked.
func TestBusyTimeout(t *testing.T) {
	path := fixture(t)
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	defer db.Close()
	tx, err := db.Begin(context.Background(), true)
	require.NoError(t, err)
	defer tx.Rollback()
	start := time.Now()
	r := cli(t, nil, "put", path, "k", "v", "--busy-timeout", "200ms")
	took := time.Since(start)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "locked")
	require.Less(t, took, 4*time.Second, "gave up after --busy-timeout, not the default 5 s")
}

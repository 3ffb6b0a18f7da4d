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
	runGolden(t, path, []step{
		{name: "w-put", args: "put FILE user:4 dave"},
		{name: "w-put-stdin", args: "put FILE --cf sessions tok-c - --ttl 45m", stdin: "from\x00stdin"},
		{name: "w-put-expire-at", args: "put FILE --cf sessions tok-d D --expire-at 2030-01-02T05:00:00Z"},
		{name: "w-put-days", args: "put FILE --cf sessions week W --ttl 7d"},
		{name: "w-ttl-days", args: "ttl FILE --cf sessions week"},
		{name: "w-put-days-hours", args: "put FILE --cf sessions longer L --ttl 1d12h"},
		{name: "w-ttl-days-hours", args: "ttl FILE --cf sessions longer --json"},
		{name: "w-put-hex", args: "put FILE --hex 0001 ff00"},
		{name: "w-put-value-file", args: "put FILE blob --value-file value.bin"},
		{name: "w-get-value-file", args: "get FILE blob --json"},
		{name: "w-put-value-file-missing", args: "put FILE blob --value-file nowhere.bin", code: 1},
		{name: "w-put-value-twice", args: "put FILE blob v --value-file value.bin", code: 2},
		{name: "w-scan-after-put", args: "scan FILE --cf sessions --with-ttl"},
		{name: "w-put-missing-cf", args: "put FILE --cf logs k v", code: 3},
		{name: "w-put-if-absent", args: "put FILE --cf sessions fresh F --if-absent --ttl 1h --json"},
		{name: "w-put-if-absent-exists", args: "put FILE --cf sessions fresh G --if-absent", code: 1},
		{name: "w-put-if-absent-expired", args: "put FILE --cf sessions tok-old again --if-absent"},
		{name: "w-put-if-absent-after", args: "get FILE --cf sessions fresh tok-old --json"},
		{name: "w-put-keep-ttl", args: "put FILE --cf sessions tok-a A2 --keep-ttl --json"},
		{name: "w-put-keep-ttl-permanent", args: "put FILE --cf sessions perm P2 --keep-ttl --json"},
		{name: "w-put-keep-ttl-after", args: "scan FILE --cf sessions --with-ttl"},
		{name: "usage-put-keep-ttl-and-ttl", args: "put FILE k v --keep-ttl --ttl 1h", code: 2},
		{name: "usage-put-keep-ttl-and-if-absent", args: "put FILE k v --keep-ttl --if-absent", code: 2},
		{name: "usage-busy-timeout", args: "put FILE k v --busy-timeout -1s", code: 2},
		{name: "w-create-missing-dir", args: "put nowhere/new.db k v --create", code: 1},
		{name: "usage-expire-at-past", args: "put FILE k v --expire-at 2020-01-01T00:00:00Z", code: 2},
		{name: "usage-bad-ttl", args: "put FILE k v --ttl soon", code: 2},
		{name: "usage-negative-ttl", args: "put FILE k v --ttl -5m", code: 2},
		{name: "usage-ttl-and-expire-at", args: "put FILE k v --ttl 5m --expire-at 2031-01-01T00:00:00Z", code: 2},
		{name: "usage-put-no-value", args: "put FILE k", code: 2},
		{name: "usage-ttl-empty", args: "put FILE k v --ttl=", code: 2},
		{name: "usage-ttl-1ns", args: "put FILE k v --ttl 1ns", code: 2},
		{name: "usage-ttl-999us", args: "put FILE k v --ttl 999us", code: 2},
		{name: "w-put-ttl-1ms", args: "put FILE --cf sessions ms v --ttl 1ms --json"},
		{name: "w-put-100000d", args: "put FILE --cf sessions days v --ttl 100000d --json"},
		{name: "w-put-2400000h", args: "put FILE --cf sessions hours v --ttl 2400000h --json"},
		{name: "usage-ttl-too-many-days", args: "put FILE k v --ttl 106752d", code: 2},
		{name: "usage-ttl-too-many-hours", args: "put FILE k v --ttl 2562048h", code: 2},
	})
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

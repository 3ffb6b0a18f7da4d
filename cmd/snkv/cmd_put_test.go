package main

import (
	"os"
	"path/filepath"
	"testing"

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
		{name: "w-create-missing-dir", args: "put nowhere/new.db k v --create", code: 1},
		{name: "usage-expire-at-past", args: "put FILE k v --expire-at 2020-01-01T00:00:00Z", code: 2},
		{name: "usage-bad-ttl", args: "put FILE k v --ttl soon", code: 2},
		{name: "usage-negative-ttl", args: "put FILE k v --ttl -5m", code: 2},
		{name: "usage-ttl-and-expire-at", args: "put FILE k v --ttl 5m --expire-at 2031-01-01T00:00:00Z", code: 2},
		{name: "usage-put-no-value", args: "put FILE k", code: 2},
	})
}

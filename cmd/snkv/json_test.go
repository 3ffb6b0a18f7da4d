package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// jsonLines parses every line of out as a JSON object.
func jsonLines(t testing.TB, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for _, l := range lines(out) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), "line %q", l)
		objs = append(objs, m)
	}
	return objs
}

func TestJSONOutput(t *testing.T) {
	path := fixture(t)
	// Expiries in ms since the epoch, from the fixture's TTLs.
	t0ms := float64(t0.UnixMilli())
	tokA, tokB := t0ms+30*60e3, t0ms+2*3600e3+1

	r := cli(t, nil, "ls", path, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []map[string]any{
		{"cf": "default", "keys": 7.0, "stored": 7.0, "ttl_keys": 0.0, "expired": 0.0},
		{"cf": "empty", "keys": 0.0, "stored": 0.0, "ttl_keys": 0.0, "expired": 0.0},
		{"cf": "sessions", "keys": 3.0, "stored": 4.0, "ttl_keys": 3.0, "expired": 1.0},
	}, jsonLines(t, r.stdout))

	r = cli(t, nil, "cf", "list", path, "--json")
	require.Equal(t, []map[string]any{{"cf": "default"}, {"cf": "empty"}, {"cf": "sessions"}}, jsonLines(t, r.stdout))

	r = cli(t, nil, "get", path, "--json", "--hex", "62696e00ff")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []map[string]any{{"cf": "default", "key_base64": "YmluAP8=", "value_base64": "AQJ0YWIJaGVyZQ=="}}, jsonLines(t, r.stdout),
		"valid UTF-8, but shorter in base64 than escaped")

	r = cli(t, nil, "get", path, "--json", `back\slash`)
	require.Equal(t, []map[string]any{{"cf": "default", "key": `back\slash`, "value": "café"}}, jsonLines(t, r.stdout))

	r = cli(t, nil, "get", path, "--json", "--cf", "sessions", "tok-b")
	require.Equal(t, []map[string]any{{"cf": "sessions", "key": "tok-b", "value": "B", "expire_ms": tokB, "ttl_ms": 2*3600e3 + 1}}, jsonLines(t, r.stdout))

	r = cli(t, nil, "ttl", path, "--json", "--cf", "sessions", "perm")
	require.Equal(t, []map[string]any{{"cf": "sessions", "key": "perm", "permanent": true}}, jsonLines(t, r.stdout))

	r = cli(t, nil, "exists", path, "--json", "nope")
	require.Equal(t, 3, r.code)
	require.Equal(t, []map[string]any{{"cf": "default", "key": "nope", "exists": false}}, jsonLines(t, r.stdout))

	r = cli(t, nil, "scan", path, "--json", "--cf", "sessions", "--with-ttl")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []map[string]any{
		{"cf": "sessions", "key": "perm", "value": "P"},
		{"cf": "sessions", "key": "tok-a", "value": "A", "expire_ms": tokA, "ttl_ms": 30 * 60e3},
		{"cf": "sessions", "key": "tok-b", "value": "B", "expire_ms": tokB, "ttl_ms": 2*3600e3 + 1},
	}, jsonLines(t, r.stdout))

	r = cli(t, nil, "scan", path, "--json", "--keys-only", "--prefix", "user:", "--reverse", "--limit", "2")
	require.Equal(t, []map[string]any{{"cf": "default", "key": "user:3"}, {"cf": "default", "key": "user:2"}}, jsonLines(t, r.stdout))

	r = cli(t, nil, "stats", path, "--json")
	st := jsonLines(t, r.stdout)
	require.Len(t, st, 1)
	require.Equal(t, 3.0, st[0]["column_families"])
	require.Equal(t, 10.0, st[0]["keys"])
	require.Equal(t, 1.0, st[0]["expired"])

	r = cli(t, nil, "check", path, "--json")
	require.Equal(t, []map[string]any{{"ok": true, "rows": 14.0, "verified": 14.0, "unverified": 0.0}}, jsonLines(t, r.stdout),
		"11 stored rows and 3 TTL key index rows, every one with its checksum")

	// Write commands answer with the record they wrote.
	r = cli(t, nil, "put", path, "--json", "--cf", "sessions", "new", "N", "--ttl", "1h")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []map[string]any{{"cf": "sessions", "key": "new", "expire_ms": t0ms + 3600e3, "ttl_ms": 3600e3}}, jsonLines(t, r.stdout))

	r = cli(t, nil, "purge", path, "--json")
	require.Equal(t, []map[string]any{
		{"cf": "default", "purged": 0.0}, {"cf": "empty", "purged": 0.0}, {"cf": "sessions", "purged": 1.0},
	}, jsonLines(t, r.stdout))

	r = cli(t, nil, "checkpoint", path, "--json", "--mode", "truncate")
	require.Equal(t, 0, r.code, r.stderr)
	cp := jsonLines(t, r.stdout)
	require.Len(t, cp, 1)
	require.Equal(t, "truncate", cp[0]["mode"])
	require.Equal(t, false, cp[0]["busy"])

	r = cli(t, nil, "vacuum", path, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	v := jsonLines(t, r.stdout)
	require.Len(t, v, 1)
	require.LessOrEqual(t, v[0]["size_after"], v[0]["size_before"])

	// Errors never go to stdout, so a script reading it sees nothing.
	r = cli(t, nil, "get", path, "--json", "nope")
	require.Equal(t, 3, r.code)
	require.Empty(t, r.stdout)
	require.True(t, strings.HasPrefix(r.stderr, "snkv: "))
}

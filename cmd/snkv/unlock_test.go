package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEncryptedStoreCommands runs the other commands on an encrypted store
// with its password in the environment: each works as on a plain store,
// and what they write is sealed.
func TestEncryptedStoreCommands(t *testing.T) {
	path := fixture(t)
	env := []string{passwordEnv + "=pw"}
	run := func(in string, args ...string) result {
		t.Helper()
		cmd := snkvCmd(t0, args...)
		cmd.Env = append(cmd.Env, env...)
		return runCmd(t, cmd, strings.NewReader(in))
	}
	ok := func(in string, args ...string) string {
		t.Helper()
		r := run(in, args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		return r.stdout
	}
	ok("", with([]string{"encrypt", path}, cheapKDF...)...)

	ok("", "put", path, "new", marker)
	require.Equal(t, marker, ok("", "get", path, "new"))
	require.Contains(t, ok("", "get", path, "user:1", "user:2"), "bob")
	require.Equal(t, "true\n", ok("", "exists", path, "new"))
	require.Contains(t, ok("", "scan", path, "--prefix", "user:"), "carol")
	require.Equal(t, "3\n", ok("", "count", path, "--prefix", "user:"))
	require.Contains(t, ok("", "ls", path), "sessions")
	require.Equal(t, "30m\n", ok("", "ttl", path, "--cf", "sessions", "tok-a"))
	ok("", "expire", path, "--cf", "sessions", "perm", "1h")
	ok("", "persist", path, "--cf", "sessions", "perm")
	ok("", "del", path, "user:3")
	ok("", "cf", "create", path, "more")
	require.Contains(t, ok("", "cf", "list", path), "more")
	ok(`{"cf":"more","key":"imported","value":"`+marker+`-2"}`+"\n", "import", path)
	require.Equal(t, marker+"-2", ok("", "get", path, "--cf", "more", "imported"))
	ok("", "cf", "clear", path, "more")
	ok("", "cf", "drop", path, "more")
	ok("", "purge", path)
	require.Contains(t, ok("", "check", path), "ok:")
	ok("", "repair", path)
	ok("", "checkpoint", path, "--mode", "truncate")
	ok("", "vacuum", path)
	ok("", "upgrade", path)
	requireSealed(t, path, marker)
	// The time-series commands work too, and their values are sealed.
	ok("", "timelog", "append", path, "ev", "--create", "--values", "1", marker+"-3")
	require.Contains(t, ok("", "timelog", "range", path, "ev"), marker+"-3")
	ok("", "checkpoint", path, "--mode", "truncate")
	requireSealed(t, path, marker+"-3")
	require.Contains(t, ok("", "timelog", "ls", path), "ev")
	require.Contains(t, ok("", "timelog", "stats", path, "ev"), "ev")
	ok("", "timelog", "compact", path, "ev")

	// Shell completion of --cf uses the secret of the environment.
	require.Contains(t, ok("", "__complete", "get", path, "--cf", ""), "sessions")

	// repair needs no secret: given none, it runs without unlocking.
	r := cli(t, nil, "repair", path)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "nothing to repair\n", r.stdout)
	damage(t, path, `DROP VIEW "__snkv_view__default"`)
	r = cli(t, nil, "repair", path)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "read view recreated")
	require.Contains(t, ok("", "get", path, "user:1"), "alice")
}

// TestTamperedSealedValue copies a sealed value onto another key, as
// another tool could: reading it is an authentication failure of a store
// that opened, so the store is damaged (exit code 4, not 5), and check
// names the key.
func TestTamperedSealedValue(t *testing.T) {
	path := fixture(t)
	keyFile := secretFile(t, strings.Repeat("k", 32))
	r := cli(t, nil, "encrypt", path, "--key-file", keyFile)
	require.Equal(t, 0, r.code, r.stderr)
	damage(t, path, `UPDATE "default" SET value = (SELECT value FROM "default" WHERE key = CAST('user:2' AS BLOB)), crc = 4294967296 WHERE key = CAST('user:1' AS BLOB)`)

	r = cli(t, nil, "get", path, "user:1", "--key-file", keyFile)
	requireDamaged(t, r, path)
	require.Contains(t, r.stderr, `authentication failed: key "user:1"`)
	r = cli(t, nil, "check", path, "--key-file", keyFile)
	require.Equal(t, exitDamaged, r.code, r.stderr)
	require.Contains(t, r.stderr, `key "user:1"`)
	require.Contains(t, r.stderr, "'snkv repair "+path+"'")
	require.NotContains(t, r.stderr, "snkv check")
	r = cli(t, nil, "get", path, "user:2", "--key-file", keyFile)
	require.Equal(t, result{"bob", "", 0}, r)
}

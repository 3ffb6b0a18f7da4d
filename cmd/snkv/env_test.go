package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// cliEnv runs the binary with extra environment variables.
func cliEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := snkvCmd(t0, args...)
	cmd.Env = append(cmd.Env, env...)
	return runCmd(t, cmd, nil)
}

// TestDefaultStore sets SNKV_DB: every command takes its FILE from it and
// FILE is left out of the arguments; a FILE given anyway is refused with a
// message that says why.
func TestDefaultStore(t *testing.T) {
	path := fixture(t)
	env := []string{dbEnv + "=" + path}
	r := cliEnv(t, env, "get", "user:1")
	require.Equal(t, result{"alice", "", 0}, r)
	r = cliEnv(t, env, "put", "--cf", "sessions", "k", "v", "--ttl", "1h")
	require.Equal(t, 0, r.code, r.stderr)
	r = cliEnv(t, env, "count", "--cf", "sessions")
	require.Equal(t, result{"4\n", "", 0}, r)
	r = cliEnv(t, env, "cf", "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "sessions")
	r = cliEnv(t, env, "timelog", "ls")
	require.Equal(t, 0, r.code, r.stderr)
	backup := filepath.Join(t.TempDir(), "b.db")
	r = cliEnv(t, env, "backup", backup)
	require.Equal(t, 0, r.code, r.stderr)
	require.FileExists(t, backup)

	r = cliEnv(t, env, "ls", path)
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "too many arguments")
	require.Contains(t, r.stderr, "SNKV_DB="+path+" gives FILE")
	r = cliEnv(t, env, "get", "--help")
	require.Equal(t, 0, r.code)
	require.Contains(t, r.stdout, "snkv get KEY...")

	// Shell completion knows the store too.
	r = cliEnv(t, env, "__complete", "get", "--cf", "")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []string{"default", "empty", "sessions", ":4"}, lines(r.stdout))
}

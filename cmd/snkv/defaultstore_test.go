package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
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

// fileArgs are arguments that make each command a valid one after its
// FILE, so that the extra FILE is all that is wrong with the command
// line; a command without an entry gets none (which its own check may
// refuse too: the message must still be the one about SNKV_DB).
var fileArgs = map[string][]string{
	"get": {"user:1"}, "exists": {"user:1"}, "ttl": {"user:1"},
	"put": {"k", "v"}, "del": {"user:1"}, "expire": {"user:1", "1h"}, "persist": {"user:1"},
	"backup": {"copy.db"}, "cf create": {"x"}, "cf drop": {"empty"}, "cf clear": {"sessions"},
	"timelog count": {"cpu"}, "timelog range": {"cpu"}, "timelog tail": {"cpu"}, "timelog stats": {"cpu"},
	"timelog append": {"cpu", "1", "2"}, "timelog delete-before": {"cpu", "1"}, "timelog compact": {"cpu"},
}

// storeCommands walks the command tree and returns the path ("cf drop") of
// every command that takes FILE first.
func storeCommands(c *cobra.Command) []string {
	var out []string
	for _, sub := range c.Commands() {
		out = append(out, storeCommands(sub)...)
	}
	if use := strings.Fields(c.Use); len(use) > 1 && use[1] == "FILE" && c.Runnable() {
		out = append(out, cmdName(c))
	}
	return out
}

// TestDefaultStoreRefusesFile runs every command that takes FILE with
// SNKV_DB set and a FILE given anyway, an existing store or the name of
// one that does not exist: each is refused with exit code 2 and the same
// message, and neither store changes. (del and get used to take the FILE
// for a key and act on the store of SNKV_DB.)
func TestDefaultStoreRefusesFile(t *testing.T) {
	cmds := storeCommands(newApp(nil, io.Discard, io.Discard).rootCommand())
	require.Contains(t, cmds, "del")
	require.Contains(t, cmds, "timelog append")
	src := logFixture(t)
	copyStore := func(t *testing.T, dst string) {
		for _, suffix := range []string{"", "-wal"} {
			b, err := os.ReadFile(src + suffix)
			if suffix != "" && os.IsNotExist(err) {
				continue
			}
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(dst+suffix, b, 0o600))
		}
	}
	for _, name := range cmds {
		for _, other := range []string{"other", "missing"} {
			t.Run(name+"/"+other, func(t *testing.T) {
				dir := t.TempDir()
				db := filepath.Join(dir, "app.db")
				copyStore(t, db)
				otherDB := filepath.Join(dir, other+".db")
				if other == "other" {
					copyStore(t, otherDB)
				}
				before, after := storeBytes(t, db), []byte(nil)
				var otherBefore []byte
				if other == "other" {
					otherBefore = storeBytes(t, otherDB)
				}
				args := append(strings.Fields(name), otherDB)
				args = append(args, fileArgs[name]...)
				cmd := snkvCmd(t0, args...)
				cmd.Dir = dir
				cmd.Env = append(cmd.Env, dbEnv+"="+db)
				r := runCmd(t, cmd, nil)
				require.Equal(t, exitUsage, r.code, "%v: %s", args, r.stderr)
				require.Contains(t, r.stderr, dbEnv+"="+db+" gives FILE", "%v", args)
				require.Empty(t, r.stdout)
				after = storeBytes(t, db)
				require.Equal(t, before, after, "the store of %s is unchanged", dbEnv)
				if other == "other" {
					require.Equal(t, otherBefore, storeBytes(t, otherDB), "the store named is unchanged")
				} else {
					require.NoFileExists(t, otherDB)
				}
			})
		}
	}
}

package main

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUpgrade says that a store of the current format is current, and
// changes nothing.
func TestUpgrade(t *testing.T) {
	runSteps(t, fixture(t))
}

// A format-2 store whose column families use TTL (written before the expiry
// copy existed) is not current: upgrade gives it the copy (format 3), its
// TTLs read as before, and a second run has nothing to do.
func TestUpgradeAddsTheExpiryCopy(t *testing.T) {
	path := fixture(t)
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	require.NoError(t, err)
	for _, q := range []string{
		`DROP TRIGGER "__snkv_ttl_ci__sessions"`, `DROP TRIGGER "__snkv_ttl_cu__sessions"`,
		`DROP TRIGGER "__snkv_ttl_cd__sessions"`, `DROP TRIGGER "__snkv_ttl_cw__sessions"`,
		`DROP TRIGGER "__snkv_ttl_cx__sessions"`, `ALTER TABLE "sessions" DROP COLUMN ttl`,
		`UPDATE "__snkv_meta" SET value = 2 WHERE name = 'format'`, `PRAGMA user_version = 2`,
	} {
		_, err := raw.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, raw.Close())

	run := func(args ...string) string {
		t.Helper()
		r := runCmd(t, snkvCmd(t0, args...), nil)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		return r.stdout
	}
	require.Equal(t, "30m\n", run("ttl", path, "--cf", "sessions", "tok-a"))
	require.Equal(t, "format 2 -> 3\n", run("upgrade", path))
	require.Equal(t, "30m\n", run("ttl", path, "--cf", "sessions", "tok-a"))
	require.Contains(t, run("check", path), "ok:")
	require.Equal(t, path+": the store is current (format 3): nothing to upgrade\n", run("upgrade", path))
}

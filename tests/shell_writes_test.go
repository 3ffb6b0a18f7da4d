package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TestShellEveryWriteKeepsTTLAndChecksumsConsistent writes rows with the
// real sqlite3 shell in every way SQL can (INSERT, UPDATE, REPLACE INTO,
// INSERT OR REPLACE, UPSERT, UPDATE OR REPLACE of the key, DELETE) over keys
// that had a TTL, and checks that each key ends with exactly the state the
// SQL gave it: the shell's value, permanent, no TTL index rows left behind,
// reported unverified (never corrupt), and untouched by a purge.
func TestShellEveryWriteKeepsTTLAndChecksumsConsistent(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	db, cf := f.openWithCF(t)
	keys := []string{"ins", "upd", "rep", "ior", "ups", "from", "onto", "del", "keep"}
	for _, k := range keys {
		if k == "ins" {
			continue // a new key
		}
		require.NoError(t, cf.PutTTL([]byte(k), []byte("old-"+k), time.Minute))
	}
	require.NoError(t, db.Close())

	lit := func(s string) string { return blobLiteral([]byte(s)) }
	shell(t, f.path, fmt.Sprintf(`
INSERT INTO "s" (key, value) VALUES (%s, %s);
UPDATE "s" SET value = %s WHERE key = %s;
REPLACE INTO "s" (key, value) VALUES (%s, %s);
INSERT OR REPLACE INTO "s" (key, value) VALUES (%s, %s);
INSERT INTO "s" (key, value) VALUES (%s, x'00') ON CONFLICT (key) DO UPDATE SET value = %s;
UPDATE OR REPLACE "s" SET key = %s WHERE key = %s;
DELETE FROM "s" WHERE key = %s;`,
		lit("ins"), lit("shell-ins"),
		lit("shell-upd"), lit("upd"),
		lit("rep"), lit("shell-rep"),
		lit("ior"), lit("shell-ior"),
		lit("ups"), lit("shell-ups"),
		lit("onto"), lit("from"),
		lit("del")))

	// The TTL tables hold exactly the keys that still have their TTL.
	require.Equal(t, []string{"keep"}, shell(t, f.path, `SELECT CAST(key AS TEXT) FROM "__snkv_ttl_k__s";`))
	require.Equal(t, []string{"keep"}, shell(t, f.path, `SELECT CAST(key AS TEXT) FROM "__snkv_ttl_e__s";`))
	require.Equal(t, []string{"ok"}, shell(t, f.path, `PRAGMA integrity_check;`))

	db = f.open(t)
	defer db.Close()
	cf, err := db.OpenColumnFamily("s")
	require.NoError(t, err)
	want := map[string]string{"ins": "shell-ins", "upd": "shell-upd", "rep": "shell-rep", "ior": "shell-ior",
		"ups": "shell-ups", "onto": "old-from"}
	for k, v := range want {
		got, d, err := cf.GetTTL([]byte(k))
		require.NoError(t, err, k)
		require.Equal(t, v, string(got), k)
		require.Equal(t, kvstore.NoTTL, d, "%s: written by the shell, the key is permanent", k)
	}
	for _, k := range []string{"from", "del"} {
		_, err := cf.Get([]byte(k))
		require.ErrorIs(t, err, kvstore.ErrNotFound, k)
	}
	d, err := cf.TTL([]byte("keep"))
	require.NoError(t, err)
	require.Equal(t, time.Minute, d)

	rep, err := db.CheckIntegrity(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Problems, "shell writes are never corrupt")
	require.EqualValues(t, 6, rep.UnverifiedByCF["s"], "each row the shell wrote is unverified")
	require.EqualValues(t, 2, rep.Verified, "keep's data row and key index row")

	f.clock.Advance(time.Hour)
	n, err := cf.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "only keep expired")
	for k, v := range want {
		got, err := cf.Get([]byte(k))
		require.NoError(t, err, k)
		require.Equal(t, v, string(got))
	}
	require.NoError(t, db.IntegrityCheck(ctx))
}

// TestShellCannotWriteForeignCells checks that the shell's type affinity
// never stores a TEXT, INTEGER or REAL cell, or a key of illegal length.
func TestShellCannotWriteForeignCells(t *testing.T) {
	f := newFixture(t)
	db := f.open(t)
	require.NoError(t, db.Put([]byte("k"), []byte("v")))
	require.NoError(t, db.Close())
	for _, q := range []string{
		`INSERT INTO "default" (key, value) VALUES ('text', x'00');`,
		`INSERT INTO "default" (key, value) VALUES (7, x'00');`,
		`INSERT INTO "default" (key, value) VALUES (x'01', 2.5);`,
		`INSERT INTO "default" (key, value) VALUES (x'', x'00');`,
		`INSERT INTO "default" (key, value) VALUES (zeroblob(65537), x'00');`,
		`UPDATE "default" SET value = 'text';`,
	} {
		out, err := shellErr(t, f.path, q)
		require.Error(t, err, "%s: %s", q, out)
	}
	require.Equal(t, []string{"1"}, shell(t, f.path, `SELECT count(*) FROM "default";`))
}

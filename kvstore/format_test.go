package kvstore_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/internal/v1fixture"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

var fmtStart = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// v1Rows is the content of the version-1 stores below: "default" with
// permanent keys, "sessions" with a mix of TTL and permanent keys.
func v1Rows() map[string][]v1fixture.Row {
	var def, sess []v1fixture.Row
	for i := range 25 {
		def = append(def, v1fixture.Row{Key: fmt.Appendf(nil, "k%03d", i), Value: bytes.Repeat([]byte{byte(i)}, i*7)})
	}
	for i := range 12 {
		r := v1fixture.Row{Key: fmt.Appendf(nil, "s%02d", i), Value: fmt.Appendf(nil, "session %d", i)}
		if i%3 != 0 {
			r.ExpMs = fmtStart.Add(time.Duration(i) * time.Hour).UnixMilli()
		}
		sess = append(sess, r)
	}
	return map[string][]v1fixture.Row{"default": def, "sessions": sess}
}

func openV1(t *testing.T, opts kvstore.Options) (*kvstore.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "v1.db")
	require.NoError(t, v1fixture.Create(path, fmtStart.UnixMilli(), v1Rows()))
	opts.Clock = kvstore.NewManualClock(fmtStart)
	return openAt(t, path, opts), path
}

// requireContent checks that the store holds exactly v1Rows, TTLs included.
func requireContent(t *testing.T, db *kvstore.Store) {
	t.Helper()
	for name, rows := range v1Rows() {
		cf, err := db.OpenColumnFamily(name)
		require.NoError(t, err)
		n := 0
		for e, err := range cf.All() {
			require.NoError(t, err)
			r := rows[n]
			require.Equal(t, r.Key, e.Key)
			require.Equal(t, string(r.Value), string(e.Value))
			n++
		}
		require.Equal(t, len(rows), n, name)
		for _, r := range rows {
			v, d, err := cf.GetTTL(r.Key)
			require.NoError(t, err)
			require.Equal(t, string(r.Value), string(v))
			if r.ExpMs == 0 {
				require.Equal(t, kvstore.NoTTL, d)
			} else {
				require.Equal(t, time.UnixMilli(r.ExpMs).Sub(fmtStart), d)
			}
		}
	}
}

func TestVersion1OpensAsIs(t *testing.T) {
	ctx := context.Background()
	db, _ := openV1(t, kvstore.Options{})
	requireFormat(t, db, 1, "opening does not upgrade")
	requireContent(t, db)
	rep, err := db.CheckIntegrity(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Problems)
	require.EqualValues(t, 25+12+8, rep.Unverified, "version-1 rows have no checksum")

	// Writes keep working in version-1 mode, TTL included.
	sess, err := db.OpenColumnFamily("sessions")
	require.NoError(t, err)
	require.NoError(t, sess.PutTTL(b("new"), b("n"), time.Minute))
	require.NoError(t, sess.Put(b("s01"), b("permanent now")))
	d, err := sess.TTL(b("s01"))
	require.NoError(t, err)
	require.Equal(t, kvstore.NoTTL, d)
	other, err := db.CreateColumnFamily("other")
	require.NoError(t, err)
	require.NoError(t, other.Put(b("x"), b("y")))
	require.NoError(t, db.IntegrityCheck(ctx))
	requireFormat(t, db, 1)
}

func TestUpgrade(t *testing.T) {
	ctx := context.Background()
	db, path := openV1(t, kvstore.Options{UpgradeBatch: 4})
	require.NoError(t, db.Upgrade(ctx))
	requireFormat(t, db, 3, "format 2, and the TTL expiry copy for the column family with TTL")
	requireContent(t, db)
	rep, err := db.CheckIntegrity(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Problems)
	require.EqualValues(t, 0, rep.Unverified, "every row has its checksum")
	require.EqualValues(t, 25+12+8, rep.Verified)
	require.NoError(t, db.Upgrade(ctx), "a second run has nothing to do")

	// The tables are STRICT now: another tool cannot store a TEXT key.
	require.NoError(t, db.Close())
	raw := rawOpen(t, path)
	_, err = raw.Exec(`INSERT INTO "default" (key, value) VALUES ('text', x'00')`)
	require.ErrorContains(t, err, "cannot store TEXT value in BLOB column")
	var uv int
	require.NoError(t, raw.QueryRow(`PRAGMA user_version`).Scan(&uv))
	require.Equal(t, 3, uv)
	require.NoError(t, raw.Close())

	// A read-only store is never upgraded.
	db2, _ := openV1(t, kvstore.Options{})
	p2 := db2.Path()
	require.NoError(t, db2.Close())
	ro := openAt(t, p2, kvstore.Options{ReadOnly: true, Upgrade: true})
	require.ErrorIs(t, ro.Upgrade(ctx), kvstore.ErrReadOnly)
	requireFormat(t, ro, 1)

	// Options.Upgrade upgrades on Open.
	require.NoError(t, ro.Close())
	up := openAt(t, p2, kvstore.Options{Upgrade: true, Clock: kvstore.NewManualClock(fmtStart)})
	requireFormat(t, up, 3)
	requireContent(t, up)
}

func TestUpgradeRefusesForeignRows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	require.NoError(t, v1fixture.Create(path, fmtStart.UnixMilli(), v1Rows()))
	rawExec(t, path, `INSERT INTO "default" (key, value) VALUES ('a text key', x'01')`)
	db := openAt(t, path, kvstore.Options{})
	// Reading code never turns the TEXT key into a key: it names the column family.
	iterErr := lastErr(db.All())
	require.ErrorIs(t, iterErr, kvstore.ErrCorrupt)
	require.ErrorContains(t, iterErr, "default")
	require.ErrorIs(t, db.IntegrityCheck(ctx), kvstore.ErrCorrupt)
	err := db.Upgrade(ctx)
	require.ErrorIs(t, err, kvstore.ErrCorrupt)
	require.ErrorContains(t, err, "not a BLOB")
	// Once the row is fixed by hand, the upgrade goes through.
	require.NoError(t, db.Close())
	rawExec(t, path, `UPDATE "default" SET key = CAST(key AS BLOB) WHERE typeof(key) = 'text'`)
	db = openAt(t, path, kvstore.Options{})
	require.NoError(t, db.Upgrade(ctx))
	require.NoError(t, db.IntegrityCheck(ctx))
	v, err := db.Get(b("a text key"))
	require.NoError(t, err)
	require.Equal(t, []byte{1}, v)
}

func TestChecksumMismatchIsCorrupt(t *testing.T) {
	ctx := context.Background()
	path := tempPath(t)
	db := openAt(t, path, kvstore.Options{Clock: kvstore.NewManualClock(fmtStart)})
	cf, err := db.CreateColumnFamily("users")
	require.NoError(t, err)
	require.NoError(t, cf.Put(b("alice"), b("a")))
	require.NoError(t, cf.Put(b("bob"), b("b")))
	require.NoError(t, cf.PutTTL(b("carol"), b("c"), time.Hour))
	// Damage stands in for a flipped bit: the checksum no longer matches.
	rawExec(t, path, `UPDATE "users" SET crc = crc + 1 WHERE key = CAST('bob' AS BLOB)`)

	_, err = cf.Get(b("bob"))
	require.ErrorIs(t, err, kvstore.ErrCorrupt)
	require.ErrorContains(t, err, "users")
	require.ErrorContains(t, err, `key "bob"`)
	_, err = cf.GetMany([][]byte{b("alice"), b("bob")})
	require.ErrorIs(t, err, kvstore.ErrCorrupt)
	iterErr := lastErr(cf.All())
	require.ErrorIs(t, iterErr, kvstore.ErrCorrupt)
	// Copying and borrowing iterations verify on different paths.
	for _, borrow := range []bool{false, true} {
		cur, err := cf.Cursor(kvstore.IterOptions{Borrow: borrow})
		require.NoError(t, err)
		var keys []string
		for cur.Next() {
			keys = append(keys, string(cur.Key()))
		}
		require.Equal(t, []string{"alice"}, keys, "borrow %v: the rows before the damaged one", borrow)
		require.ErrorIs(t, cur.Err(), kvstore.ErrCorrupt)
		require.ErrorContains(t, cur.Err(), `key "bob"`)
		require.NoError(t, cur.Close())
	}
	v, err := cf.Get(b("alice"))
	require.NoError(t, err, "other rows stay readable")
	require.Equal(t, "a", string(v))

	// The TTL key index row has a checksum too: Exists and TTL read it.
	rawExec(t, path, `UPDATE "__snkv_ttl_k__users" SET crc = crc + 1`)
	_, err = cf.Exists(b("carol"))
	require.ErrorIs(t, err, kvstore.ErrCorrupt)
	_, err = cf.TTL(b("carol"))
	require.ErrorIs(t, err, kvstore.ErrCorrupt)

	rep, err := db.CheckIntegrity(ctx)
	require.NoError(t, err)
	require.Len(t, rep.Problems, 2, "%q", rep.Problems)
	require.Equal(t, []string{
		`column family "users": 1 row fails its checksum: key "bob"`,
		`column family "users": 1 TTL key index row fails its checksum: key "carol"`,
	}, rep.Problems, "every bad key is named, as text when it is printable")
	require.ErrorIs(t, db.IntegrityCheck(ctx), kvstore.ErrCorrupt)
}

func TestForeignWritesAreUnverifiedNotCorrupt(t *testing.T) {
	// In an encrypted store a value in the clear written by another tool
	// is an authentication error instead (TestEncryptionBindsValuesToTheirPlace).
	skipSealedSuite(t)
	ctx := context.Background()
	path := tempPath(t)
	clk := kvstore.NewManualClock(fmtStart)
	db := openAt(t, path, kvstore.Options{Clock: clk})
	for _, k := range []string{"upd", "rep", "ups"} {
		require.NoError(t, db.PutTTL(b(k), b("old"), time.Minute))
	}
	rawExec(t, path,
		`INSERT INTO "default" (key, value) VALUES (CAST('ins' AS BLOB), CAST('inserted' AS BLOB))`,
		`UPDATE "default" SET value = CAST('updated' AS BLOB) WHERE key = CAST('upd' AS BLOB)`,
		`REPLACE INTO "default" (key, value) VALUES (CAST('rep' AS BLOB), CAST('replaced' AS BLOB))`,
		`INSERT INTO "default" (key, value) VALUES (CAST('ups' AS BLOB), x'00') ON CONFLICT (key) DO UPDATE SET value = CAST('upserted' AS BLOB)`)
	want := map[string]string{"ins": "inserted", "upd": "updated", "rep": "replaced", "ups": "upserted"}
	for k, v := range want {
		got, d, err := db.GetTTL(b(k))
		require.NoError(t, err, k)
		require.Equal(t, v, string(got))
		require.Equal(t, kvstore.NoTTL, d, "%s: a write from another tool makes the key permanent", k)
	}
	rep, err := db.CheckIntegrity(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Problems)
	require.EqualValues(t, 4, rep.Unverified)
	require.EqualValues(t, 4, rep.UnverifiedByCF["default"])
	// Iterations return them too, copying or borrowing, and count them.
	for _, borrow := range []bool{false, true} {
		got := map[string]string{}
		for e, err := range db.Scan(kvstore.IterOptions{Borrow: borrow}) {
			require.NoError(t, err)
			got[string(e.Key)] = string(e.Value)
		}
		require.Equal(t, want, got, "borrow %v", borrow)
	}
	st, err := db.Stats(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 4+2*4, st.UnverifiedReads)
	// Nothing is purged: the keys are permanent now.
	clk.Advance(time.Hour)
	n, err := db.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	// snkv's next write gives the row its checksum back.
	require.NoError(t, db.Put(b("ins"), b("inserted")))
	rep, err = db.CheckIntegrity(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 3, rep.Unverified)
}

func TestStrictTablesRefuseForeignCells(t *testing.T) {
	path := tempPath(t)
	db := openAt(t, path, kvstore.Options{})
	require.NoError(t, db.PutTTL(b("k"), b("v"), time.Hour))
	require.NoError(t, db.Close())
	raw := rawOpen(t, path)
	defer raw.Close()
	for _, q := range []string{
		`INSERT INTO "default" (key, value) VALUES ('text', x'00')`,
		`INSERT INTO "default" (key, value) VALUES (42, x'00')`,
		`INSERT INTO "default" (key, value) VALUES (x'01', 1.5)`,
		`INSERT INTO "default" (key, value) VALUES (x'01', 'text')`,
		`INSERT INTO "default" (key, value) VALUES (x'', x'00')`,
		`INSERT INTO "default" (key, value) VALUES (zeroblob(65537), x'00')`,
		`INSERT INTO "default" (key, value) VALUES (x'01', NULL)`,
		`INSERT INTO "__snkv_ttl_k__default" (key, expire_ms) VALUES (x'02', x'0102')`,
		`INSERT INTO "__snkv_catalog" (name, kind, created_ms) VALUES ('x', 'kv', 'soon')`,
	} {
		_, err := raw.Exec(q)
		require.Error(t, err, q)
	}
	_, err := raw.Exec(`INSERT INTO "default" (key, value) VALUES (zeroblob(65536), x'00')`)
	require.NoError(t, err, "a key of exactly 64 KiB is legal")
}

func TestAdoptKeepsTheOtherApplicationsHeader(t *testing.T) {
	path := tempPath(t)
	rawExec(t, path, `PRAGMA user_version = 7`, `CREATE TABLE app (x)`, `INSERT INTO app VALUES (1)`)
	db := openAt(t, path, kvstore.Options{Adopt: true})
	require.NoError(t, db.Put(b("k"), b("v")))
	requireFormat(t, db, 2)
	require.NoError(t, db.Close())
	raw := rawOpen(t, path)
	var uv int
	require.NoError(t, raw.QueryRow(`PRAGMA user_version`).Scan(&uv))
	require.Equal(t, 7, uv, "user_version belongs to the other application")
	require.NoError(t, raw.Close())
	db = openAt(t, path, kvstore.Options{})
	got, err := db.Get(b("k"))
	require.NoError(t, err)
	require.Equal(t, "v", string(got))
}

func TestRefusedAdoptChangesNothing(t *testing.T) {
	for _, clash := range []string{`CREATE TABLE "default" (x)`, `CREATE TABLE "Default" (x)`, `CREATE TABLE "__snkv_catalog" (x)`,
		`CREATE VIEW "__snkv_view__default" AS SELECT 1`, `CREATE TABLE "__SNKV_meta" (x)`} {
		t.Run(clash, func(t *testing.T) {
			path := tempPath(t)
			rawExec(t, path, `PRAGMA user_version = 7`, `CREATE TABLE app (x)`, clash)
			before, err := os.ReadFile(path)
			require.NoError(t, err)
			_, err = kvstore.Open(path, kvstore.Options{Adopt: true})
			require.ErrorIs(t, err, kvstore.ErrNotStore)
			require.ErrorIs(t, err, kvstore.ErrExists)
			requireRefusedUntouched(t, path, before)
		})
	}
}

func TestUTF16FilesAreRefused(t *testing.T) {
	path := tempPath(t)
	rawExec(t, path, `PRAGMA encoding = 'UTF-16le'`, `CREATE TABLE app (x)`)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	_, err = kvstore.Open(path, kvstore.Options{Adopt: true})
	require.ErrorIs(t, err, kvstore.ErrNotStore)
	require.ErrorContains(t, err, "UTF-16le")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after)
}

func TestBackupKeepsChecksums(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t, kvstore.Options{Clock: kvstore.NewManualClock(fmtStart)})
	for i := range 50 {
		require.NoError(t, db.PutTTL(fmt.Appendf(nil, "k%d", i), b("v"), time.Hour))
	}
	dest := filepath.Join(t.TempDir(), "backup.db")
	require.NoError(t, db.Backup(ctx, dest))
	bk := openAt(t, dest, kvstore.Options{Clock: kvstore.NewManualClock(fmtStart)})
	rep, err := bk.CheckIntegrity(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Problems)
	require.EqualValues(t, 100, rep.Verified, "50 rows and their 50 key index rows")
	require.Zero(t, rep.Unverified)
	v, err := bk.FormatVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, v, "format 3: the TTL writes gave the column family its expiry copy")
}

// A version-1 file cannot record that a hidden table is sealed: asking for
// one there is ErrVersion with the way out (Upgrade), and creates nothing.
// Before, it was ErrCorrupt blaming a missing meta table, as if the file
// were damaged. Without HiddenSealed the table is made as before.
func TestCreateSealedHiddenTableInVersion1File(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	require.NoError(t, v1fixture.Create(path, fmtStart.UnixMilli(), v1Rows()))
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	err = db.Update(ctx, func(tx *kvstore.Tx) error {
		_, err := layer.CreateHiddenTable(tx, "layer", "sealed", layer.HiddenSealed)
		return err
	})
	require.ErrorIs(t, err, kvstore.ErrVersion)
	require.NotErrorIs(t, err, kvstore.ErrCorrupt)
	require.Contains(t, err.Error(), "Upgrade")
	names, err := layer.ListHiddenTables(ctx, db, "layer")
	require.NoError(t, err)
	require.Empty(t, names)
	require.NoError(t, db.IntegrityCheck(ctx))

	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		_, err := layer.CreateHiddenTable(tx, "layer", "clear")
		return err
	}))
	require.NoError(t, db.Upgrade(ctx))
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		_, err := layer.CreateHiddenTable(tx, "layer", "sealed", layer.HiddenSealed)
		return err
	}))
}

// requireFormat requires db's file to be of format want.
func requireFormat(t *testing.T, db *kvstore.Store, want int, msgAndArgs ...any) {
	t.Helper()
	v, err := db.FormatVersion(context.Background())
	require.NoError(t, err)
	require.Equal(t, want, v, msgAndArgs...)
}

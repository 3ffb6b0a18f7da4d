package tests

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// The expiry copy (layout.CopyColumn): a data row of a column family with
// TTL keeps a copy of its key index row, which point reads use instead of
// the key index. These tests write each of the three tables with the real
// sqlite3 shell and require that no read ever believes a copy the write
// made stale.

// copies returns, by key, the hex of each data row's expiry copy ("" for
// none), as the shell reads it.
func copies(t *testing.T, path, cf string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range shell(t, path, fmt.Sprintf(`SELECT CAST(key AS TEXT) || '|' || coalesce(hex(%s), '') FROM %s;`, layout.CopyColumn, layout.Quote(cf))) {
		k, v, _ := strings.Cut(line, "|")
		out[k] = v
	}
	return out
}

// TestShellWritesClearTheExpiryCopy writes the key index, the expiry index
// and the data table's copy column with the shell, and checks that every
// key then reads the expiry its key index row holds, at every clock,
// before and after it expires, and that the copies the writes made stale
// are gone while the others stay.
func TestShellWritesClearTheExpiryCopy(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	db, cf := f.openWithCF(t)
	keys := []string{"kupd", "krep", "kdelrep", "kforge", "kmove", "keep", "kexp"}
	for _, k := range keys {
		require.NoError(t, cf.PutTTL([]byte(k), []byte("v-"+k), time.Minute))
	}
	require.NoError(t, db.Close())

	before := copies(t, f.path, "s")
	for _, k := range keys {
		if !engine.FastPath {
			require.Empty(t, before[k], "%s: SQL writes no copy", k)
			continue
		}
		require.Len(t, before[k], 2*layout.CopyLen, "%s: a PutTTL writes the copy", k)
		require.True(t, strings.HasPrefix(before[k], upperHex(be64(start.Add(time.Minute).UnixMilli()))), k)
	}

	hour, twoHours := be64(start.Add(time.Hour).UnixMilli()), be64(start.Add(2*time.Hour).UnixMilli())
	lit := func(s string) string { return blobLiteral([]byte(s)) }
	shell(t, f.path, fmt.Sprintf(`
-- The key index: an UPDATE of the expiry, an INSERT OR REPLACE, a DELETE
-- and INSERT of a new row; the expiry index moved along.
UPDATE "__snkv_ttl_k__s" SET expire_ms = %[1]s, crc = 4294967296 WHERE key = %[3]s;
UPDATE "__snkv_ttl_e__s" SET expire_ms = %[1]s WHERE key = %[3]s;
INSERT OR REPLACE INTO "__snkv_ttl_k__s" (key, expire_ms) VALUES (%[4]s, %[2]s);
UPDATE "__snkv_ttl_e__s" SET expire_ms = %[2]s WHERE key = %[4]s;
DELETE FROM "__snkv_ttl_k__s" WHERE key = %[5]s;
INSERT INTO "__snkv_ttl_k__s" (key, expire_ms) VALUES (%[5]s, %[1]s);
UPDATE "__snkv_ttl_e__s" SET expire_ms = %[1]s WHERE key = %[5]s;
-- The data table: another key's copy written over a row's (an UPDATE of
-- the copy column), and a row's key changed (its copy names the old key).
UPDATE "s" SET ttl = (SELECT ttl FROM "s" WHERE key = %[6]s) WHERE key = %[7]s;
UPDATE "s" SET key = %[8]s WHERE key = %[9]s;
-- The expiry index alone: the key index, which reads trust, keeps its row.
DELETE FROM "__snkv_ttl_e__s" WHERE key = %[10]s;`,
		blobLiteral(hour), blobLiteral(twoHours), lit("kupd"), lit("krep"), lit("kdelrep"),
		lit("keep"), lit("kforge"), lit("kmoved"), lit("kmove"), lit("kexp")))
	require.Equal(t, []string{"ok"}, shell(t, f.path, `PRAGMA integrity_check;`))

	after := copies(t, f.path, "s")
	for _, k := range []string{"kupd", "krep", "kdelrep", "kforge", "kmoved"} {
		require.Empty(t, after[k], "%s: a shell write cleared the copy", k)
	}
	require.Equal(t, before["keep"], after["keep"], "keep: untouched")
	require.Equal(t, before["kexp"], after["kexp"], "kexp: its key index row did not change")

	db = f.open(t)
	defer db.Close()
	cf, err := db.OpenColumnFamily("s")
	require.NoError(t, err)
	reads := engine.FastReads()
	want := map[string]time.Duration{"kupd": time.Hour, "krep": 2 * time.Hour, "kdelrep": time.Hour,
		"kforge": time.Minute, "keep": time.Minute, "kexp": time.Minute}
	for k, d := range want {
		got, err := cf.TTL([]byte(k))
		require.NoError(t, err, k)
		require.Equal(t, d, got, "%s: the key index row's expiry", k)
	}
	if engine.FastPath {
		require.Greater(t, engine.FastReads(), reads, "the reads went below SQL")
	}
	// The key that moved is permanent (the shell's UPDATE of a key clears
	// its TTL), whatever its old copy said.
	_, d, err := cf.GetTTL([]byte("kmoved"))
	require.NoError(t, err)
	require.Equal(t, kvstore.NoTTL, d)

	// At the old expiry: the keys whose copy said a minute are live if
	// their key index row says later, and gone otherwise.
	f.clock.Advance(time.Minute)
	for k, d := range want {
		v, err := cf.Get([]byte(k))
		if d == time.Minute {
			require.ErrorIs(t, err, kvstore.ErrNotFound, k)
			continue
		}
		require.NoError(t, err, k)
		require.Equal(t, "v-"+k, string(v))
		ok, err := cf.Exists([]byte(k))
		require.NoError(t, err)
		require.True(t, ok, k)
	}
	rep, err := db.CheckIntegrity(ctx)
	require.NoError(t, err)
	for _, p := range rep.Problems {
		require.NotContains(t, p, "expiry copy", "no copy disagrees with its key index row")
	}
}

// TestDamagedExpiryCopyIsCorrupt flips one bit of a row's expiry copy in
// the file: the read that uses the copy reports ErrCorrupt (the copy
// carries its key index row's checksum), never another expiry, and the
// integrity check names the row's column family.
func TestDamagedExpiryCopyIsCorrupt(t *testing.T) {
	if !engine.FastPath {
		t.Skip("the copy is read only below SQL")
	}
	ctx := context.Background()
	f := newFixture(t)
	db, cf := f.openWithCF(t)
	require.NoError(t, cf.PutTTL([]byte("victim"), []byte("value-of-the-victim"), time.Hour))
	require.NoError(t, cf.PutTTL([]byte("other"), []byte("value-of-the-other"), 2*time.Hour))
	_, err := db.Checkpoint(ctx, kvstore.CheckpointTruncate)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	cp, err := hex.DecodeString(copies(t, f.path, "s")["victim"])
	require.NoError(t, err)
	require.Len(t, cp, layout.CopyLen)
	raw, err := os.ReadFile(f.path)
	require.NoError(t, err)
	// The copy's bytes are also those of the key index row's expiry and
	// checksum; the data row's copy is the one that follows its value's
	// checksum, not its key.
	at := -1
	for from := 0; ; {
		i := bytes.Index(raw[from:], cp)
		if i < 0 {
			break
		}
		i += from
		if !bytes.HasSuffix(raw[:i], []byte("victim")) {
			at = i
		}
		from = i + 1
	}
	require.GreaterOrEqual(t, at, 0, "the data row's copy is in the file")
	raw[at+7] ^= 0x01 // the expiry's last byte: one millisecond later
	require.NoError(t, os.WriteFile(f.path, raw, 0o600))

	db = f.open(t)
	defer db.Close()
	cf, err = db.OpenColumnFamily("s")
	require.NoError(t, err)
	// The first read of a table on a connection runs its SQL statement,
	// which reads the key index (the copy is not read, so not believed);
	// the next ones on the same connection read the copy below SQL.
	require.NoError(t, db.View(ctx, func(tx *kvstore.Tx) error {
		h := tx.CF(cf)
		v, err := h.Get([]byte("other"))
		require.NoError(t, err)
		require.Equal(t, "value-of-the-other", string(v))
		reads := engine.FastReads()
		_, err = h.Get([]byte("victim"))
		require.ErrorIs(t, err, kvstore.ErrCorrupt)
		require.Greater(t, engine.FastReads(), reads, "read below SQL, from the copy")
		_, err = h.Exists([]byte("victim"))
		require.ErrorIs(t, err, kvstore.ErrCorrupt)
		_, err = h.TTL([]byte("victim"))
		require.ErrorIs(t, err, kvstore.ErrCorrupt)
		// A scan below SQL reads the copy too.
		var scanErr error
		for _, err := range h.All() {
			if err != nil {
				scanErr = err
				break
			}
		}
		require.ErrorIs(t, scanErr, kvstore.ErrCorrupt)
		v, err = h.Get([]byte("other"))
		require.NoError(t, err)
		require.Equal(t, "value-of-the-other", string(v))
		return nil
	}))
	rep, err := db.CheckIntegrity(ctx)
	require.NoError(t, err)
	require.Contains(t, strings.Join(rep.Problems, "\n"), "1 data rows whose expiry copy is not their key index row")
}

// TestExpiryCopyRaisesTheFormat: a store whose column families never used
// TTL stays at format 2, which a library that reads only format 2 opens;
// the first TTL write makes it format 3 (meta row and user_version), which
// such a library refuses with ErrVersion (see "newer format" in
// TestOpenBadPaths: this library refuses 4 the same way).
func TestExpiryCopyRaisesTheFormat(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	db := f.open(t)
	require.NoError(t, db.Put([]byte("k"), []byte("v")))
	v, err := db.FormatVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, v, "no TTL, no copy: format 2")
	require.NoError(t, db.PutTTL([]byte("t"), []byte("v"), time.Hour))
	v, err = db.FormatVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, layout.CopyFormat, v)
	require.NoError(t, db.Close())
	require.Equal(t, []string{"3", "3"}, shell(t, f.path, `SELECT value FROM "__snkv_meta" WHERE name = 'format'; PRAGMA user_version;`))
	if !engine.FastPath {
		return // SQL writes no copy
	}
	require.Equal(t, []string{"t|" + upperHex(be64(start.Add(time.Hour).UnixMilli()))},
		shell(t, f.path, `SELECT CAST(key AS TEXT) || '|' || hex(substr(ttl, 1, 8)) FROM "default" WHERE ttl IS NOT NULL;`))
}

// TestUpgradeAddsTheExpiryCopy: a format-2 store whose column family got
// its TTL tables before the expiry copy existed (made here by taking the
// copy out with the shell) reads its TTL keys from the key index; Upgrade
// adds the copy column and its triggers, makes the file format 3 and keeps
// every key and TTL; the next TTL write of a key gives it its copy.
func TestUpgradeAddsTheExpiryCopy(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	db, cf := f.openWithCF(t)
	for i := range 20 {
		require.NoError(t, cf.PutTTL(fmt.Appendf(nil, "k%02d", i), []byte("v"), time.Duration(i+1)*time.Minute))
	}
	require.NoError(t, cf.Put([]byte("plain"), []byte("p")))
	require.NoError(t, db.Close())
	var q []string
	for _, p := range []string{"ci", "cu", "cd", "cw", "cx"} {
		q = append(q, fmt.Sprintf(`DROP TRIGGER "__snkv_ttl_%s__s";`, p))
	}
	q = append(q, `ALTER TABLE "s" DROP COLUMN ttl;`, `UPDATE "__snkv_meta" SET value = 2 WHERE name = 'format';`, `PRAGMA user_version = 2;`)
	shell(t, f.path, strings.Join(q, "\n"))

	db = f.open(t)
	defer db.Close()
	v, err := db.FormatVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, v)
	require.NoError(t, db.IntegrityCheck(ctx), "a format-2 store without the copy is sound")
	cf, err = db.OpenColumnFamily("s")
	require.NoError(t, err)
	d, err := cf.TTL([]byte("k04"))
	require.NoError(t, err)
	require.Equal(t, 5*time.Minute, d)

	require.NoError(t, db.Upgrade(ctx))
	v, err = db.FormatVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, layout.CopyFormat, v)
	require.NoError(t, db.IntegrityCheck(ctx))
	for i := range 20 {
		_, d, err := cf.GetTTL(fmt.Appendf(nil, "k%02d", i))
		require.NoError(t, err)
		require.Equal(t, time.Duration(i+1)*time.Minute, d)
	}
	ok, err := cf.Exists([]byte("plain"))
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, cf.PutTTL([]byte("k00"), []byte("w"), time.Hour))
	f.clock.Advance(2 * time.Minute)
	_, err = cf.Get([]byte("k01"))
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	got, d, err := cf.GetTTL([]byte("k00"))
	require.NoError(t, err)
	require.Equal(t, "w", string(got))
	require.Equal(t, time.Hour-2*time.Minute, d)
	require.NoError(t, db.IntegrityCheck(ctx))
	require.NoError(t, db.Close())
	require.Equal(t, []string{"3"}, shell(t, f.path, `PRAGMA user_version;`))
	if engine.FastPath {
		require.Equal(t, []string{"k00"}, shell(t, f.path, `SELECT CAST(key AS TEXT) FROM "s" WHERE ttl IS NOT NULL;`))
	}
}

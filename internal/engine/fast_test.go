package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/btree"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/stretchr/testify/require"
)

const fastTable = `CREATE TABLE "t" (key BLOB PRIMARY KEY NOT NULL CHECK (length(key) BETWEEN 1 AND 65536), value BLOB NOT NULL, crc INTEGER NOT NULL DEFAULT 4294967296) STRICT, WITHOUT ROWID;
CREATE TRIGGER "__snkv_crc__t" AFTER UPDATE OF key, value ON "t" WHEN NEW.crc IS OLD.crc AND NEW.crc IS NOT 4294967296 AND (NEW.key IS NOT OLD.key OR NEW.value IS NOT OLD.value) BEGIN UPDATE "t" SET crc = 4294967296 WHERE key = NEW.key; END;`

func fastDB(t *testing.T) *DB {
	t.Helper()
	db, err := Open(Config{Path: filepath.Join(t.TempDir(), "f.db"), Journal: "WAL", Sync: "NORMAL",
		BusyTimeout: time.Second, MaxReaders: 2})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	withWriter(t, db, func(c *Conn) {
		require.NoError(t, db.SetJournalMode(context.Background(), c))
		require.NoError(t, c.ExecScript(context.Background(), fastTable))
	})
	return db
}

// tablesOf names the objects of a column family table called name.
func tablesOf(name string) *layout.Objects {
	t := layout.For(name, true, true)
	return &t
}

// upsertIn runs one Upsert in a write transaction and commits it.
func upsertIn(t *testing.T, db *DB, table string, k, v string, crc int64) bool {
	t.Helper()
	tx, err := db.Begin(context.Background(), true)
	require.NoError(t, err)
	ok, err := tx.Conn().Upsert(tablesOf(table), []byte(k), []byte(v), crc)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	return ok
}

func rowOf(t *testing.T, db *DB, table, k string) (v string, crc int64) {
	t.Helper()
	c, err := db.AcquireReader(context.Background())
	require.NoError(t, err)
	defer db.ReleaseReader(c)
	rows, err := c.Query(context.Background(), `SELECT value, crc FROM `+Quote(table)+` WHERE key = ?1`, []byte(k))
	require.NoError(t, err)
	defer rows.Close()
	require.True(t, rows.Next(), "row %q missing", k)
	return string(rows.Bytes(0)), rows.Int(1)
}

// The build says which path a write in a transaction takes: the fast path
// unless built with snkv_nofast, and the SQL path when it is turned off.
func TestFastPathRuns(t *testing.T) {
	db := fastDB(t)
	require.Equal(t, FastPath, upsertIn(t, db, "t", "a", "1", 7), "fast path taken")
	if FastPath {
		v, crc := rowOf(t, db, "t", "a")
		require.Equal(t, "1", v)
		require.Equal(t, int64(7), crc)
	}
	was := SetFastPath(false)
	t.Cleanup(func() { SetFastPath(was) })
	require.False(t, upsertIn(t, db, "t", "a", "2", 8), "turned off: the caller runs SQL")
	require.Equal(t, FastPath, was)
}

// Outside a write transaction, and in a read transaction, the fast path
// declines: a lone statement commits on its own.
func TestFastPathNeedsWriteTx(t *testing.T) {
	db := fastDB(t)
	withWriter(t, db, func(c *Conn) {
		ok, err := c.Upsert(tablesOf("t"), []byte("k"), []byte("v"), 1)
		require.NoError(t, err)
		require.False(t, ok)
	})
}

// A table with a trigger other than the checksum trigger (the TTL
// triggers, or one a user added with the shell) must run its SQL: the
// fast path would not fire it.
func TestFastPathDeclinesForeignTrigger(t *testing.T) {
	db := fastDB(t)
	withWriter(t, db, func(c *Conn) {
		require.NoError(t, c.ExecScript(context.Background(), `CREATE TABLE audit (k BLOB); CREATE TRIGGER user_audit AFTER INSERT ON "t" BEGIN INSERT INTO audit VALUES (NEW.key); END;`))
	})
	require.False(t, upsertIn(t, db, "t", "a", "1", 7))
}

// A table that is not a WITHOUT ROWID table of three columns, or that
// does not exist, is never written below SQL.
func TestFastPathDeclinesOtherShapes(t *testing.T) {
	db := fastDB(t)
	withWriter(t, db, func(c *Conn) {
		require.NoError(t, c.ExecScript(context.Background(), `CREATE TABLE r (key BLOB PRIMARY KEY, value BLOB, crc INTEGER); CREATE TABLE w2 (key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID`))
	})
	require.False(t, upsertIn(t, db, "r", "a", "1", 7), "rowid table")
	require.False(t, upsertIn(t, db, "w2", "a", "1", 7), "two columns where three were expected")
	require.False(t, upsertIn(t, db, "missing", "a", "1", 7), "no such table")
}

// A table dropped and created again by another connection gets a new root
// page: the fast path never writes through the root it knew. Its first
// write after the change declines (the schema this connection parsed is
// stale); the SQL statement reloads the schema, and the next write goes
// to the new table.
func TestFastPathStaleSchema(t *testing.T) {
	if !FastPath {
		t.Skip("built without the fast path")
	}
	db := fastDB(t)
	require.True(t, upsertIn(t, db, "t", "a", "1", 7))

	other, err := openConn(db.dsn)
	require.NoError(t, err)
	// Other tables first, so that the new "t" cannot reuse the old root.
	require.NoError(t, other.ExecScript(context.Background(), `CREATE TABLE pad (x); DROP TABLE "t"; `+fastTable))
	require.NoError(t, other.close())

	tx, err := db.Begin(context.Background(), true)
	require.NoError(t, err)
	ok, err := tx.Conn().Upsert(tablesOf("t"), []byte("b"), []byte("2"), 8)
	require.NoError(t, err)
	require.False(t, ok, "stale schema: must decline")
	_, err = tx.Conn().Exec(context.Background(), `INSERT INTO "t" (key, value, crc) VALUES (?1, ?2, ?3)`, []byte("b"), []byte("2"), int64(8))
	require.NoError(t, err)
	ok, err = tx.Conn().Upsert(tablesOf("t"), []byte("c"), []byte("3"), 9)
	require.NoError(t, err)
	require.True(t, ok, "schema reloaded by the statement")
	require.NoError(t, tx.Commit())

	withWriter(t, db, func(c *Conn) {
		n, err := count1(c, `SELECT count(*) FROM "t"`)
		require.NoError(t, err)
		require.Equal(t, int64(2), n, "the new table holds b and c, not a")
		n, err = count1(c, `SELECT count(*) FROM pragma_integrity_check WHERE integrity_check != 'ok'`)
		require.NoError(t, err)
		require.Zero(t, n)
	})
}

func count1(c *Conn, q string) (int64, error) { return c.QueryInt(context.Background(), q) }

// A transaction rolled back behind its owner's back refuses its later
// statements and its commit.
func TestAbortedTxRefusesCommit(t *testing.T) {
	db := fastDB(t)
	tx, err := db.Begin(context.Background(), true)
	require.NoError(t, err)
	_, err = tx.Conn().Exec(context.Background(), `INSERT INTO "t" (key, value, crc) VALUES (x'01', x'02', 3)`)
	require.NoError(t, err)
	require.Error(t, tx.Conn().abort(tx.Conn().fastErr(&btree.Error{Code: 13}))) // SQLITE_FULL
	require.ErrorIs(t, tx.Check(true), ErrTxDone)
	require.ErrorIs(t, tx.Commit(), ErrTxDone)
	withWriter(t, db, func(c *Conn) {
		n, err := count1(c, `SELECT count(*) FROM "t"`)
		require.NoError(t, err)
		require.Zero(t, n, "the write before the failure was rolled back")
	})
}

// A transaction that writes more than BigTxRows rows below SQL gets the
// writer's larger spill size until it ends; a smaller one keeps SQLite's.
func TestWriterSpillPagesInBigTx(t *testing.T) {
	if !FastPath {
		t.Skip("built without the fast path")
	}
	db, err := Open(Config{Path: filepath.Join(t.TempDir(), "s.db"), Journal: "WAL", Sync: "NORMAL",
		BusyTimeout: time.Second, MaxReaders: 1, SpillPages: 4096})
	require.NoError(t, err)
	defer db.Close()
	withWriter(t, db, func(c *Conn) {
		require.NoError(t, c.ExecScript(context.Background(), fastTable))
	})
	spill := func(c *Conn) int64 {
		n, err := count1(c, `PRAGMA cache_spill`)
		require.NoError(t, err)
		return n
	}
	var base int64
	withWriter(t, db, func(c *Conn) { base = spill(c) })
	require.NotEqual(t, int64(4096), base)
	for _, rows := range []int{BigTxRows - 1, BigTxRows + 10} {
		tx, err := db.Begin(context.Background(), true)
		require.NoError(t, err)
		for i := range rows {
			ok, err := tx.Conn().Upsert(tablesOf("t"), []byte(fmt.Sprintf("k%06d", i)), []byte("v"), 1)
			require.NoError(t, err)
			require.True(t, ok)
		}
		want := base
		if rows > BigTxRows {
			want = 4096
		}
		require.Equal(t, want, spill(tx.Conn()), "%d rows", rows)
		require.NoError(t, tx.Commit())
		withWriter(t, db, func(c *Conn) { require.Equal(t, base, spill(c), "restored at the end") })
	}
}

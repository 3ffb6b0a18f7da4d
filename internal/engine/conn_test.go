package engine

import (
	"bytes"
	"context"
	"database/sql/driver"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sqlite3 "modernc.org/sqlite/lib"
)

func testDB(t *testing.T, path string) *DB {
	t.Helper()
	db, err := Open(Config{Path: path, Journal: "WAL", Sync: "NORMAL", BusyTimeout: time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func withWriter(t *testing.T, db *DB, fn func(c *Conn)) {
	t.Helper()
	require.NoError(t, db.WithWriter(context.Background(), func(c *Conn) error {
		fn(c)
		return nil
	}))
}

// Every argument type binds and reads back as what it is; blobs and texts
// larger than the connection's reusable buffer too.
func TestConnBindAndRead(t *testing.T) {
	ctx := context.Background()
	db := testDB(t, "")
	big := bytes.Repeat([]byte("0123456789abcdef"), (maxScratch/16)+100)
	withWriter(t, db, func(c *Conn) {
		require.NoError(t, c.ExecScript(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, v)"))
		args := []any{[]byte("blob"), []byte{}, []byte(nil), nil, "text", "", int64(-7), 42, true, 1.5, big, string(big)}
		for i, a := range args {
			n, err := c.Exec(ctx, "INSERT INTO t (id, v) VALUES (?1, ?2)", int64(i), a)
			require.NoError(t, err)
			require.EqualValues(t, 1, n)
		}
		want := []driver.Value{[]byte("blob"), []byte{}, nil, nil, "text", "", int64(-7), int64(42), int64(1), 1.5, big, string(big)}
		for i, w := range want {
			var dest [1]driver.Value
			require.NoError(t, c.QueryRow(ctx, "SELECT v FROM t WHERE id = ?1", dest[:], int64(i)))
			require.Equal(t, w, dest[0], "argument %d", i)
		}
		rows, err := c.Query(ctx, "SELECT v FROM t ORDER BY id")
		require.NoError(t, err)
		var got [][]byte
		for rows.Next() {
			got = append(got, rows.Bytes(0))
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
		require.Equal(t, [][]byte{[]byte("blob"), {}, nil, nil, []byte("text"), {}, nil, nil, nil, nil, big, big}, got,
			"Bytes gives blobs and texts, empty ones non-nil; NULL and numbers give nil")

		var dest [1]driver.Value
		require.ErrorIs(t, c.QueryRow(ctx, "SELECT v FROM t WHERE id = ?1", dest[:], int64(99)), ErrNotFound)
		_, err = c.Exec(ctx, "INSERT INTO t (id, v) VALUES (?1, ?2)", int64(100))
		require.Error(t, err, "a missing argument is an error")
		_, err = c.Exec(ctx, "INSERT INTO t (id, v) VALUES (?1, ?2)", int64(100), struct{}{})
		require.Error(t, err, "an unsupported argument type is an error")
	})
}

// Bytes copies: the slice stays intact after the statement moves on.
func TestConnBytesIsACopy(t *testing.T) {
	ctx := context.Background()
	db := testDB(t, "")
	withWriter(t, db, func(c *Conn) {
		require.NoError(t, c.ExecScript(ctx, "CREATE TABLE t (v BLOB); INSERT INTO t VALUES (x'01'), (x'02'), (x'03')"))
		rows, err := c.Query(ctx, "SELECT v FROM t ORDER BY v")
		require.NoError(t, err)
		var kept [][]byte
		for rows.Next() {
			kept = append(kept, rows.Bytes(0))
			require.Equal(t, kept[len(kept)-1], rows.RawBytes(0))
		}
		require.NoError(t, rows.Close())
		require.Equal(t, [][]byte{{1}, {2}, {3}}, kept)
	})
}

// A second Query of the same SQL while the first is open runs on a
// statement of its own; the cached one is reusable once both are closed.
func TestConnNestedQuery(t *testing.T) {
	ctx := context.Background()
	db := testDB(t, "")
	withWriter(t, db, func(c *Conn) {
		require.NoError(t, c.ExecScript(ctx, "CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1), (2), (3)"))
		const q = "SELECT v FROM t WHERE v >= ?1 ORDER BY v"
		outer, err := c.Query(ctx, q, int64(1))
		require.NoError(t, err)
		var pairs [][2]int64
		for outer.Next() {
			o := outer.Int(0)
			inner, err := c.Query(ctx, q, o)
			require.NoError(t, err)
			for inner.Next() {
				pairs = append(pairs, [2]int64{o, inner.Int(0)})
			}
			require.NoError(t, inner.Close())
			// An Exec of the busy statement's SQL also works.
			_, err = c.Exec(ctx, q, o)
			require.NoError(t, err)
		}
		require.NoError(t, outer.Close())
		require.Equal(t, [][2]int64{{1, 1}, {1, 2}, {1, 3}, {2, 2}, {2, 3}, {3, 3}}, pairs)
		// Closing early and closing twice are fine; the statement is reused.
		r, err := c.Query(ctx, q, int64(2))
		require.NoError(t, err)
		require.True(t, r.Next())
		require.NoError(t, r.Close())
		require.NoError(t, r.Close())
		require.False(t, r.Next())
		r, err = c.Query(ctx, q, int64(3))
		require.NoError(t, err)
		require.True(t, r.Next())
		require.EqualValues(t, 3, r.Int(0))
		require.False(t, r.Next())
		require.False(t, r.Next(), "a finished Rows never restarts its statement")
		require.NoError(t, r.Close())
	})
}

// SQLite errors carry their result code and map to the sentinels; a query
// that fails on its first step fails in Query.
func TestConnErrors(t *testing.T) {
	ctx := context.Background()
	db := testDB(t, filepath.Join(t.TempDir(), "e.db"))
	withWriter(t, db, func(c *Conn) {
		err := c.ExecScript(ctx, "NOT SQL")
		require.Error(t, err)
		require.Equal(t, codeError, Code(err))
		var se *Error
		require.True(t, errors.As(err, &se))
		require.Contains(t, err.Error(), "syntax error")

		// A missing table is damage at this layer, named with a pointer to
		// Repair; the column family layer alone tells a dropped column
		// family (ErrNotFound) from it.
		_, err = c.Query(ctx, "SELECT * FROM missing")
		require.True(t, NoSuchTable(err))
		werr := Wrap(ctx, "q", err)
		require.ErrorIs(t, werr, ErrCorrupt)
		require.NotErrorIs(t, werr, ErrNotFound)
		require.Contains(t, werr.Error(), `"missing" is missing`)
		require.Contains(t, werr.Error(), "Repair")

		require.NoError(t, c.ExecScript(ctx, "CREATE TABLE t (k PRIMARY KEY)"))
		_, err = c.Exec(ctx, "INSERT INTO t VALUES (?1)", int64(1))
		require.NoError(t, err)
		_, err = c.Exec(ctx, "INSERT INTO t VALUES (?1)", int64(1))
		require.Error(t, err)
		require.Equal(t, 19, Code(err), "SQLITE_CONSTRAINT")
		require.Equal(t, 19|(6<<8), func() int { errors.As(err, &se); return se.Code() }(), "extended code: PRIMARY KEY")

		// A table dropped by another connection fails the cached statement.
		rows, err := c.Query(ctx, "SELECT k FROM t")
		require.NoError(t, err)
		require.NoError(t, rows.Close())
		other := testDB(t, db.Config().Path)
		withWriter(t, other, func(o *Conn) { require.NoError(t, o.ExecScript(ctx, "DROP TABLE t")) })
		_, err = c.Query(ctx, "SELECT k FROM t")
		require.True(t, NoSuchTable(err), "the cached statement is compiled anew and finds no table: %v", err)
	})
}

// A context that ends interrupts the running statement, and the connection
// stays usable for the next one; an ended context fails at once.
func TestConnContextInterrupt(t *testing.T) {
	db := testDB(t, "")
	long := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
	withWriter(t, db, func(c *Conn) {
		for _, run := range []func(ctx context.Context) error{
			func(ctx context.Context) error { _, err := c.Exec(ctx, long); return err },
			func(ctx context.Context) error { return c.ExecScript(ctx, long) },
			func(ctx context.Context) error { _, err := c.Query(ctx, long); return err },
			func(ctx context.Context) error {
				var dest [1]driver.Value
				return c.QueryRow(ctx, long, dest[:])
			},
		} {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			start := time.Now()
			err := run(ctx)
			cancel()
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Less(t, time.Since(start), 10*time.Second)

			var dest [1]driver.Value
			require.NoError(t, c.QueryRow(context.Background(), "SELECT 1", dest[:]))
			require.EqualValues(t, 1, dest[0])
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.Exec(ctx, "SELECT 1")
		require.ErrorIs(t, err, context.Canceled)
		_, err = c.Query(ctx, "SELECT 1")
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, c.ExecScript(ctx, "SELECT 1"), context.Canceled)
	})
}

// A cached statement runs as compiled, call after call, even when its plan
// depends on a parameter's value (a LEFT JOIN on the bound key, as a column
// family's read view with TTL does); a large bound value is not kept.
func TestConnCachedStatementIsNotRecompiled(t *testing.T) {
	ctx := context.Background()
	db := testDB(t, "")
	withWriter(t, db, func(c *Conn) {
		require.NoError(t, c.ExecScript(ctx, `CREATE TABLE d (key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID;
			CREATE TABLE k (key BLOB PRIMARY KEY, e BLOB) WITHOUT ROWID;
			CREATE VIEW v AS SELECT d.key AS key, d.value AS value, k.e AS e FROM d LEFT JOIN k ON k.key = d.key`))
		big := make([]byte, 5*maxScratch)
		for i := range 20 {
			key := []byte{byte(i)}
			_, err := c.Exec(ctx, "INSERT INTO d (key, value) VALUES (?1, ?2)", key, big[:i*maxScratch/4])
			require.NoError(t, err)
			var dest [2]driver.Value
			require.NoError(t, c.QueryRow(ctx, "SELECT value, e FROM v WHERE key = ?1", dest[:], key))
			require.Len(t, dest[0], i*maxScratch/4)
		}
		for q, s := range c.stmts {
			require.Zero(t, sqlite3.Xsqlite3_stmt_status(c.tls, s.p, sqlite3.SQLITE_STMTSTATUS_REPREPARE, 0), q)
			require.False(t, s.big, q)
		}
	})
}

// One-row queries reuse the connection's Rows: one run while another
// query's rows are open, or one that fails, leaves both right, and a
// one-row query costs no Rows of its own.
func TestQueryOneReusesItsRows(t *testing.T) {
	ctx := context.Background()
	db := testDB(t, "")
	withWriter(t, db, func(c *Conn) {
		require.NoError(t, c.ExecScript(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, v); INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')"))
		rows, err := c.Query(ctx, "SELECT id FROM t ORDER BY id")
		require.NoError(t, err)
		var got []int64
		for rows.Next() {
			id := rows.Int(0)
			got = append(got, id)
			v, err := c.QueryText(ctx, "SELECT v FROM t WHERE id = ?1", id)
			require.NoError(t, err)
			require.Equal(t, string(rune('a'+id-1)), v)
			n, err := c.QueryInt(ctx, "SELECT count(*) FROM t WHERE id <= ?1", id)
			require.NoError(t, err)
			require.Equal(t, id, n)
		}
		require.NoError(t, rows.Close())
		require.Equal(t, []int64{1, 2, 3}, got)
		var dest [1]driver.Value
		require.ErrorIs(t, c.QueryRow(ctx, "SELECT v FROM t WHERE id = 9", dest[:]), ErrNotFound)
		require.Error(t, c.QueryRow(ctx, "SELECT nope FROM t", dest[:]))
		require.NoError(t, c.QueryRow(ctx, "SELECT v FROM t WHERE id = 2", dest[:]))
		require.Equal(t, "b", dest[0])
		require.False(t, c.oneBusy)
		allocs := testing.AllocsPerRun(100, func() {
			_, _ = c.QueryInt(ctx, "SELECT count(*) FROM t")
		})
		require.Zero(t, allocs)
	})
}

// A write transaction remembers every key it verified, a lone one without
// a map; ForgetVerified forgets them all; a nil key is ignored.
func TestTxVerified(t *testing.T) {
	ctx := context.Background()
	db := testDB(t, "")
	tx, err := db.Begin(ctx, true)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	type key struct{ n int }
	a, b, c := key{1}, key{2}, key{3}
	require.False(t, tx.Verified(a))
	tx.MarkVerified(a)
	require.True(t, tx.Verified(a))
	require.False(t, tx.Verified(b))
	require.Nil(t, tx.verified, "a lone key needs no map")
	require.Zero(t, testing.AllocsPerRun(10, func() { tx.MarkVerified(a) }))
	tx.MarkVerified(b)
	tx.MarkVerified(a)
	tx.MarkVerified(c)
	for _, k := range []key{a, b, c} {
		require.True(t, tx.Verified(k), k)
	}
	tx.ForgetVerified()
	for _, k := range []key{a, b, c} {
		require.False(t, tx.Verified(k), k)
	}
	tx.MarkVerified(nil) // ignored
	require.False(t, tx.Verified(nil))
	require.False(t, tx.Verified(a))
}

package engine

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

const pointQuery = `SELECT value, NULL, crc, NULL FROM "t" WHERE key = ?1`

// pointSpec reads what pointQuery reads.
var pointSpec = PointSpec{Objects: tablesOf("t"), Value: true, Fields: []int{ViewValue, ViewExpiry, ViewCrc, ViewEcrc}}

// pointIn runs QueryPoint for key in a read transaction of c and returns
// what it found and whether it was read below SQL.
func pointIn(t *testing.T, c *Conn, key string) (v string, crc int64, found, fast bool) {
	t.Helper()
	before := FastReads()
	rows, err := c.QueryPoint(context.Background(), pointQuery, &pointSpec, []byte(key))
	require.NoError(t, err)
	if found = rows.Next(); found {
		v, crc = string(rows.Bytes(0)), rows.Int(2)
		require.Equal(t, KindNull, rows.Kind(1))
	}
	require.NoError(t, rows.Close())
	return v, crc, found, FastReads() > before
}

// A point read in a read transaction goes below SQL once the transaction
// has its snapshot and the table has been seen in the current schema (its
// first read runs the statement, whose SchemaChanged the caller checks),
// misses included, and returns
// what the statement returns; turned off, or built without the fast path,
// every read runs the statement.
func TestQueryPointReadsBelowSQL(t *testing.T) {
	db := fastDB(t)
	withWriter(t, db, func(c *Conn) {
		_, err := c.Exec(context.Background(), `INSERT INTO "t" VALUES (?1, ?2, ?3)`, []byte("a"), []byte("1"), int64(7))
		require.NoError(t, err)
	})
	c, err := db.AcquireReader(context.Background())
	require.NoError(t, err)
	defer db.ReleaseReader(c)
	require.NoError(t, c.Control(context.Background(), "BEGIN"))
	defer func() { require.NoError(t, c.Control(context.Background(), "COMMIT")) }()

	// The first read takes the snapshot of the deferred transaction, the
	// second is the table's first sight in the schema: both run SQL.
	for range 2 {
		v, crc, found, fast := pointIn(t, c, "a")
		require.Equal(t, []any{"1", int64(7), true, false}, []any{v, crc, found, fast})
	}
	var v string
	var crc int64
	var found, fast bool
	for range 3 {
		for _, k := range []string{"a", "missing", "a"} {
			v, crc, found, fast = pointIn(t, c, k)
			require.Equal(t, FastPath, fast, "a read after a miss stays below SQL")
			if k == "a" {
				require.Equal(t, []any{"1", int64(7), true}, []any{v, crc, found})
			} else {
				require.False(t, found)
			}
		}
	}
	was := SetFastPath(false)
	defer SetFastPath(was)
	_, _, found, fast = pointIn(t, c, "a")
	require.True(t, found)
	require.False(t, fast)
}

// Point rows not yet closed keep the connection's own rows taken: a second
// read then runs the statement, and both stay readable.
func TestQueryPointNested(t *testing.T) {
	if !FastPath {
		t.Skip("built with snkv_nofast")
	}
	db := fastDB(t)
	upsertIn(t, db, "t", "a", "1", 7)
	upsertIn(t, db, "t", "b", "2", 8)
	withWriter(t, db, func(c *Conn) {
		ctx := context.Background()
		require.NoError(t, c.Control(ctx, "BEGIN IMMEDIATE"))
		defer func() { require.NoError(t, c.Control(ctx, "ROLLBACK")) }()
		pointIn(t, c, "a") // seen in this schema
		outer, err := c.QueryPoint(ctx, pointQuery, &pointSpec, []byte("a"))
		require.NoError(t, err)
		before := FastReads()
		inner, err := c.QueryPoint(ctx, pointQuery, &pointSpec, []byte("b"))
		require.NoError(t, err)
		require.Equal(t, before, FastReads(), "the nested read ran SQL")
		require.True(t, inner.Next())
		require.Equal(t, "2", string(inner.Bytes(0)))
		require.NoError(t, inner.Close())
		require.True(t, outer.Next())
		require.Equal(t, "1", string(outer.Bytes(0)))
		require.NoError(t, outer.Close())
	})
}

// The bytes of a point read answered below SQL outlive a statement run
// while its rows are open, as a statement's row does: the statement
// closes the fast path's cursors and may reuse the pages they held (a
// cache of ten pages here, refilled by a scan of the whole table).
func TestQueryPointRowOutlivesAStatement(t *testing.T) {
	if !FastPath {
		t.Skip("built with snkv_nofast")
	}
	db := fastDB(t)
	ctx := context.Background()
	val := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, 900) }
	withWriter(t, db, func(c *Conn) {
		require.NoError(t, c.Control(ctx, "BEGIN IMMEDIATE"))
		for i := range 2000 {
			_, err := c.Exec(ctx, `INSERT INTO "t" VALUES (?1, ?2, 1)`, fmt.Appendf(nil, "k%05d", i), val(i))
			require.NoError(t, err)
		}
		require.NoError(t, c.Control(ctx, "COMMIT"))
	})
	c, err := db.AcquireReader(ctx)
	require.NoError(t, err)
	defer db.ReleaseReader(c)
	require.NoError(t, c.ExecScript(ctx, "PRAGMA cache_size = 10"))
	require.NoError(t, c.Control(ctx, "BEGIN"))
	defer func() { require.NoError(t, c.Control(ctx, "COMMIT")) }()
	pointIn(t, c, "k00000") // the snapshot
	pointIn(t, c, "k00000") // the table's first sight
	for _, i := range []int{3, 1999, 777} {
		before := FastReads()
		rows, err := c.QueryPoint(ctx, pointQuery, &pointSpec, fmt.Appendf(nil, "k%05d", i))
		require.NoError(t, err)
		require.Greater(t, FastReads(), before, "read below SQL")
		require.True(t, rows.Next())
		raw := rows.RawBytes(0)
		n, err := c.QueryInt(ctx, `SELECT sum(length(value)) FROM "t"`)
		require.NoError(t, err)
		require.Equal(t, int64(2000*900), n)
		require.Equal(t, val(i), raw, "row %d changed under a statement", i)
		require.Equal(t, val(i), rows.Bytes(0))
		require.NoError(t, rows.Close())
	}
}

package v1fixture_test

import (
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"

	"github.com/snkv-go/snkv/internal/v1fixture"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

// query returns the rows of q as strings, one a row, its columns joined
// by "|".
func query(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	require.NoError(t, err, q)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		line := ""
		for i, v := range vals {
			if i > 0 {
				line += "|"
			}
			if v.Valid {
				line += v.String
			} else {
				line += "NULL"
			}
		}
		out = append(out, line)
	}
	require.NoError(t, rows.Err())
	return out
}

// Create writes what the version-1 library wrote: its header fields, a
// catalog row per column family ("default" always), a data table and a
// read view each, and, for a column family with expiring keys, the key and
// expiry index tables (8-byte big-endian expiries) and the triggers that
// keep them in step with the data table.
func TestCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	const created = 1_700_000_000_000
	exp := int64(1_700_000_360_000)
	require.NoError(t, v1fixture.Create(path, created, map[string][]v1fixture.Row{
		"users":    {{Key: []byte("alice"), Value: []byte("A")}, {Key: []byte("bob"), Value: nil}},
		"sessions": {{Key: []byte("s1"), Value: []byte("x"), ExpMs: exp}, {Key: []byte("s2"), Value: []byte("y")}},
	}))
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1)

	require.Equal(t, []string{"1"}, query(t, db, `PRAGMA user_version`))
	require.Equal(t, []string{"1936616310"}, query(t, db, `PRAGMA application_id`))
	require.Equal(t, []string{"2"}, query(t, db, `PRAGMA auto_vacuum`), "incremental")
	require.Equal(t, []string{"wal"}, query(t, db, `PRAGMA journal_mode`))
	require.Equal(t, []string{"default|kv|1700000000000", "sessions|kv|1700000000000", "users|kv|1700000000000"},
		query(t, db, `SELECT name, kind, created_ms FROM "__snkv_catalog" ORDER BY name`))

	require.Equal(t, []string{"alice|A|NULL", "bob||NULL"},
		query(t, db, `SELECT CAST(key AS TEXT), CAST(value AS TEXT), expire_ms FROM "__snkv_view__users" ORDER BY key`))
	require.Empty(t, query(t, db, `SELECT name FROM sqlite_schema WHERE name LIKE '__snkv_ttl%users'`), "no TTL tables without an expiring key")
	require.Empty(t, query(t, db, `SELECT * FROM "__snkv_view__default"`))

	be := binary.BigEndian.AppendUint64(nil, uint64(exp))
	require.Equal(t, []string{"s1|x|" + strings.ToUpper(hex.EncodeToString(be)), "s2|y|"},
		query(t, db, `SELECT CAST(key AS TEXT), CAST(value AS TEXT), hex(expire_ms) FROM "__snkv_view__sessions" ORDER BY key`),
		"the view joins the expiry")
	require.Equal(t, []string{"1"}, query(t, db, `SELECT count(*) FROM "__snkv_ttl_k__sessions" WHERE key = CAST('s1' AS BLOB) AND expire_ms = ?`, be))
	require.Equal(t, []string{"1"}, query(t, db, `SELECT count(*) FROM "__snkv_ttl_e__sessions" WHERE key = ?`, append(be, "s1"...)))

	// The triggers remove a key's TTL rows with its data row.
	_, err = db.Exec(`DELETE FROM "sessions" WHERE key = CAST('s1' AS BLOB)`)
	require.NoError(t, err)
	require.Equal(t, []string{"0|0"}, query(t, db,
		`SELECT (SELECT count(*) FROM "__snkv_ttl_k__sessions"), (SELECT count(*) FROM "__snkv_ttl_e__sessions")`))
}

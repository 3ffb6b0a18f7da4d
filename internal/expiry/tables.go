package expiry

import (
	"context"
	"fmt"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/layout"
)

// The TTL tables of a column family, as the database has them: whether they
// exist, whether they agree, how many of their keys have expired.

// Enabled reports whether the column family's TTL tables exist, asking the
// database (so it sees what other processes did). It costs the same
// whatever the number of column families: rather than scan sqlite_schema
// (which has no index on name), it runs a cached statement that names the
// key index, which SQLite resolves through its in-memory schema and
// recompiles when another connection changed the schema; a missing table
// fails to compile, which means "not enabled".
func Enabled(ctx context.Context, c *engine.Conn, t *layout.Objects) (bool, error) {
	_, err := c.Exec(ctx, `SELECT 1 FROM `+t.Quoted.Keys+` LIMIT 0`)
	switch {
	case err == nil:
		return true, nil
	case engine.NoSuchTable(err):
		return false, nil
	}
	return false, err
}

// EnabledWhole is Enabled for a caller about to use or create the TTL
// state: a missing key index beside an existing expiry index is half of
// the state dropped outside snkv, which creating the key index anew would
// silently make wrong (every key with a TTL would read as permanent), so
// it is reported as ErrCorrupt naming the missing table.
func EnabledWhole(ctx context.Context, c *engine.Conn, t *layout.Objects) (bool, error) {
	on, err := Enabled(ctx, c, t)
	if on || err != nil {
		return on, err
	}
	_, err = c.Exec(ctx, `SELECT 1 FROM `+t.Quoted.Expiry+` LIMIT 0`)
	if err == nil {
		// Each of the two statements read the schema as it was when it
		// was compiled: outside a write transaction another connection may
		// have created or dropped the tables in between. Ask again, in
		// one statement, which sees one state of the schema (a scan of
		// sqlite_schema, but only in this rare case).
		var keys, expiry bool
		rows, err := c.Query(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name IN (?1, ?2)`, t.Keys, t.Expiry)
		if err != nil {
			return false, err
		}
		for rows.Next() {
			n := string(rows.Bytes(0))
			keys, expiry = keys || n == t.Keys, expiry || n == t.Expiry
		}
		if err := rows.Close(); err != nil {
			return false, err
		}
		if keys || !expiry {
			return keys, nil
		}
	}
	switch {
	case err == nil:
		return false, fmt.Errorf("%w: %q is missing from the file while %q exists (dropped outside snkv?): IntegrityCheck reports it, Repair recreates it",
			engine.ErrCorrupt, t.Keys, t.Expiry)
	case engine.NoSuchTable(err):
		return false, nil
	}
	return false, err
}

// Check verifies that the column family's three tables agree: every key
// index row has a data row and exactly the matching expiry index row, and
// every expiry index row has its key index row. It returns one line per kind
// of disagreement found.
func Check(ctx context.Context, c *engine.Conn, t *layout.Objects) ([]string, error) {
	type check struct{ what, sql string }
	checks := []check{
		{"key index rows without a data row",
			`SELECT count(*) FROM ` + t.Quoted.Keys + ` AS k WHERE NOT EXISTS (SELECT 1 FROM ` + t.Quoted.Data + ` AS d WHERE d.key = k.key)`},
		{"key index rows whose expiry is not 8 bytes",
			`SELECT count(*) FROM ` + t.Quoted.Keys + ` WHERE typeof(expire_ms) <> 'blob' OR length(expire_ms) <> 8`},
	}
	if t.V2 {
		checks = append(checks,
			check{"key index rows without their expiry index row",
				`SELECT count(*) FROM ` + t.Quoted.Keys + ` AS k WHERE NOT EXISTS (SELECT 1 FROM ` + t.Quoted.Expiry + ` AS e WHERE e.expire_ms = k.expire_ms AND e.key = k.key)`},
			check{"expiry index rows without a matching key index row",
				`SELECT count(*) FROM ` + t.Quoted.Expiry + ` AS e WHERE NOT EXISTS (SELECT 1 FROM ` + t.Quoted.Keys + ` AS k WHERE k.key = e.key AND k.expire_ms = e.expire_ms)`})
	} else {
		checks = append(checks,
			check{"key index rows without their expiry index row",
				`SELECT count(*) FROM ` + t.Quoted.Keys + ` AS k WHERE NOT EXISTS (SELECT 1 FROM ` + t.Quoted.Expiry + ` AS e WHERE e.key = CAST(k.expire_ms || k.key AS BLOB))`},
			check{"expiry index rows without a matching key index row",
				`SELECT count(*) FROM ` + t.Quoted.Expiry + ` AS e WHERE NOT EXISTS (SELECT 1 FROM ` + t.Quoted.Keys + ` AS k WHERE k.key = substr(e.key, 9) AND k.expire_ms = substr(e.key, 1, 8))`})
	}
	if t.V2 && t.Crc {
		withCopy, err := HasCopy(ctx, c, t)
		if err != nil {
			return nil, err
		}
		if withCopy {
			checks = append(checks, check{"data rows whose expiry copy is not their key index row", copyMismatchSQL(t)})
		}
	}
	var problems []string
	for _, ch := range checks {
		rows, err := c.Query(ctx, ch.sql)
		if err != nil {
			return nil, err
		}
		var n int64
		if rows.Next() {
			n = rows.Int(0)
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		if n > 0 {
			problems = append(problems, fmt.Sprintf("column family %q: %d %s", t.Data, n, ch.what))
		}
	}
	return problems, nil
}

// CountExpired counts the keys whose expiry index entry is expired as of
// nowMs, reading only the expired head of the expiry index. It works on
// either layout (it asks the file which one the index has).
func CountExpired(ctx context.Context, c *engine.Conn, t *layout.Objects, nowMs int64) (int64, error) {
	rows, err := c.Query(ctx, `SELECT count(*) FROM pragma_table_info(?1) WHERE name = 'expire_ms'`, t.Expiry)
	if err != nil {
		return 0, err
	}
	v2 := rows.Next() && rows.Int(0) > 0
	if err := rows.Close(); err != nil {
		return 0, err
	}
	q := `SELECT count(*) FROM ` + t.Quoted.Expiry + ` WHERE key < ?1`
	if v2 {
		q = `SELECT count(*) FROM ` + t.Quoted.Expiry + ` WHERE expire_ms < ?1`
	}
	if rows, err = c.Query(ctx, q, PurgeBound(nowMs)); err != nil {
		return 0, err
	}
	var n int64
	if rows.Next() {
		n = rows.Int(0)
	}
	return n, rows.Close()
}

package ttl

import (
	"context"
	"fmt"

	"github.com/snkv-go/snkv/internal/engine"
)

// Name prefixes of the hidden objects that carry a column family's TTL
// state. Every one starts with "__", which column family names may not.
const (
	KeysPrefix     = "__snkv_ttl_k__" // key -> 8-byte expiry
	ExpiryPrefix   = "__snkv_ttl_e__" // 8-byte expiry || key
	ViewPrefix     = "__snkv_view__"  // the read path of a column family
	OnUpdatePrefix = "__snkv_ttl_tu__"
	OnDeletePrefix = "__snkv_ttl_td__"
)

// Tables names, quoted for SQL, the objects of one column family.
type Tables struct {
	CF                   string // the column family's own name, unquoted
	Data, Keys, Expiry   string
	View                 string
	OnUpdate, OnDelete   string
	KeysName, ExpiryName string // unquoted, for sqlite_schema look-ups
}

// TablesFor returns the object names of column family cf.
func TablesFor(cf string) Tables {
	return Tables{
		CF:         cf,
		Data:       engine.Quote(cf),
		Keys:       engine.Quote(KeysPrefix + cf),
		Expiry:     engine.Quote(ExpiryPrefix + cf),
		View:       engine.Quote(ViewPrefix + cf),
		OnUpdate:   engine.Quote(OnUpdatePrefix + cf),
		OnDelete:   engine.Quote(OnDeletePrefix + cf),
		KeysName:   KeysPrefix + cf,
		ExpiryName: ExpiryPrefix + cf,
	}
}

// PlainViewSQL is the read view of a column family that has never used TTL:
// its rows with a NULL expiry. SQLite flattens it into every query, so it
// costs nothing at run time.
func (t Tables) PlainViewSQL() string {
	return fmt.Sprintf(`CREATE VIEW %s AS SELECT key, value, NULL AS expire_ms FROM %s`, t.View, t.Data)
}

// EnableSQL returns the statements that give a column family its TTL state:
// the key index, the expiry index, the triggers that keep both in step with
// the data table (whoever writes it, the sqlite3 shell included), and the
// read view that joins the expiry in. They run inside the transaction of the
// column family's first TTL write.
func (t Tables) EnableSQL() []string {
	cleanup := fmt.Sprintf(`
  DELETE FROM %[1]s WHERE key = (SELECT CAST(expire_ms || OLD.key AS BLOB) FROM %[2]s WHERE key = OLD.key);
  DELETE FROM %[2]s WHERE key = OLD.key;`, t.Expiry, t.Keys)
	return []string{
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (key BLOB PRIMARY KEY, expire_ms BLOB NOT NULL) WITHOUT ROWID`, t.Keys),
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (key BLOB PRIMARY KEY) WITHOUT ROWID`, t.Expiry),
		fmt.Sprintf(`CREATE TRIGGER IF NOT EXISTS %s AFTER UPDATE ON %s BEGIN%s
END`, t.OnUpdate, t.Data, cleanup),
		fmt.Sprintf(`CREATE TRIGGER IF NOT EXISTS %s AFTER DELETE ON %s BEGIN%s
END`, t.OnDelete, t.Data, cleanup),
		fmt.Sprintf(`DROP VIEW IF EXISTS %s`, t.View),
		fmt.Sprintf(`CREATE VIEW %s AS SELECT d.key AS key, d.value AS value, k.expire_ms AS expire_ms FROM %s AS d LEFT JOIN %s AS k ON k.key = d.key`, t.View, t.Data, t.Keys),
	}
}

// DropSQL removes every object of the column family, TTL state included.
func (t Tables) DropSQL() []string {
	return []string{
		`DROP VIEW IF EXISTS ` + t.View,
		`DROP TABLE IF EXISTS ` + t.Data, // its triggers go with it
		`DROP TABLE IF EXISTS ` + t.Keys,
		`DROP TABLE IF EXISTS ` + t.Expiry,
	}
}

// Enabled reports whether the column family's TTL tables exist, asking the
// database (so it sees what other processes did). It costs the same
// whatever the number of column families: rather than scan sqlite_schema
// (which has no index on name), it runs a cached statement that names the
// key index, which SQLite resolves through its in-memory schema and
// recompiles when another connection changed the schema; a missing table
// fails to compile, which means "not enabled".
func (t Tables) Enabled(ctx context.Context, c *engine.Conn) (bool, error) {
	_, err := c.Exec(ctx, `SELECT 1 FROM `+t.Keys+` LIMIT 0`)
	switch {
	case err == nil:
		return true, nil
	case engine.NoSuchTable(err):
		return false, nil
	}
	return false, err
}

// Check verifies that the column family's three tables agree: every key
// index row has a data row and exactly the matching expiry index row, and
// every expiry index row has its key index row. It returns one line per kind
// of disagreement found.
func (t Tables) Check(ctx context.Context, c *engine.Conn) ([]string, error) {
	checks := []struct{ what, sql string }{
		{"key index rows without a data row",
			`SELECT count(*) FROM ` + t.Keys + ` AS k WHERE NOT EXISTS (SELECT 1 FROM ` + t.Data + ` AS d WHERE d.key = k.key)`},
		{"key index rows whose expiry is not 8 bytes",
			`SELECT count(*) FROM ` + t.Keys + ` WHERE typeof(expire_ms) <> 'blob' OR length(expire_ms) <> 8`},
		{"key index rows without their expiry index row",
			`SELECT count(*) FROM ` + t.Keys + ` AS k WHERE NOT EXISTS (SELECT 1 FROM ` + t.Expiry + ` AS e WHERE e.key = CAST(k.expire_ms || k.key AS BLOB))`},
		{"expiry index rows without a matching key index row",
			`SELECT count(*) FROM ` + t.Expiry + ` AS e WHERE NOT EXISTS (SELECT 1 FROM ` + t.Keys + ` AS k WHERE k.key = substr(e.key, 9) AND k.expire_ms = substr(e.key, 1, 8))`},
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
			problems = append(problems, fmt.Sprintf("column family %q: %d %s", t.CF, n, ch.what))
		}
	}
	return problems, nil
}

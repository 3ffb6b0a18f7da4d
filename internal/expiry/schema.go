package expiry

import (
	"context"
	"fmt"

	"github.com/snkv-go/snkv/internal/engine"
)

// Name prefixes of the hidden objects that carry a column family's TTL
// state. Every one starts with "__", which column family names may not.
const (
	KeysPrefix     = "__snkv_ttl_k__" // key -> 8-byte expiry
	ExpiryPrefix   = "__snkv_ttl_e__" // (8-byte expiry, key), sorted by expiry
	ViewPrefix     = "__snkv_view__"  // the read path of a column family
	OnUpdatePrefix = "__snkv_ttl_tu__"
	OnDeletePrefix = "__snkv_ttl_td__"
	OnInsertPrefix = "__snkv_ttl_ti__" // format 2 only
)

// NoChecksum is the checksum column's value for a row that has none (it
// was written by another tool): 2^32, outside the range of a stored
// checksum (a signed 32-bit integer). In format 2 the column is NOT NULL,
// so that damage to a row's header that turns its checksum into NULL is
// caught rather than read as "unverified".
const NoChecksum int64 = 1 << 32

// Tables names, quoted for SQL, the objects of one column family, and says
// which layout they have.
type Tables struct {
	CF                           string // the column family's own name, unquoted
	Data, Keys, Expiry           string
	View                         string
	OnUpdate, OnDelete, OnInsert string
	KeysName, ExpiryName         string // unquoted, for sqlite_schema look-ups
	ViewName                     string
	OnUpdateName, OnDeleteName   string
	OnInsertName                 string

	// Crc is set when the data table has the checksum column (format 2, or a
	// version-1 table part way through Upgrade).
	Crc bool
	// V2 is set for the format-2 TTL layout: a two-column expiry index
	// (expire_ms, key), a checksummed key index, STRICT tables, and an
	// INSERT trigger besides the UPDATE and DELETE ones. Without it the
	// objects have the version-1 layout.
	V2 bool
	// Fast, when set, names the same objects for the engine's fast path,
	// which PurgeOnce tries before its SQL statements.
	Fast *engine.Tables
}

// TablesFor returns the object names of column family cf, with the
// version-1 layout flags (set Crc and V2 for others).
func TablesFor(cf string) Tables {
	return Tables{
		CF:           cf,
		Data:         engine.Quote(cf),
		Keys:         engine.Quote(KeysPrefix + cf),
		Expiry:       engine.Quote(ExpiryPrefix + cf),
		View:         engine.Quote(ViewPrefix + cf),
		OnUpdate:     engine.Quote(OnUpdatePrefix + cf),
		OnDelete:     engine.Quote(OnDeletePrefix + cf),
		OnInsert:     engine.Quote(OnInsertPrefix + cf),
		KeysName:     KeysPrefix + cf,
		ExpiryName:   ExpiryPrefix + cf,
		ViewName:     ViewPrefix + cf,
		OnUpdateName: OnUpdatePrefix + cf,
		OnDeleteName: OnDeletePrefix + cf,
		OnInsertName: OnInsertPrefix + cf,
	}
}

// PlainViewSQL is the read view of a column family that has never used TTL:
// its rows with a NULL expiry. SQLite flattens it into every query, so it
// costs nothing at run time.
func (t Tables) PlainViewSQL() string {
	if t.Crc {
		return fmt.Sprintf(`CREATE VIEW %s AS SELECT key, value, crc, NULL AS expire_ms, NULL AS ecrc FROM %s`, t.View, t.Data)
	}
	return fmt.Sprintf(`CREATE VIEW %s AS SELECT key, value, NULL AS expire_ms FROM %s`, t.View, t.Data)
}

// TTLViewSQL is the read view of a column family with TTL tables: its rows
// joined with their expiry.
func (t Tables) TTLViewSQL() string {
	switch {
	case t.Crc && t.V2:
		return fmt.Sprintf(`CREATE VIEW %s AS SELECT d.key AS key, d.value AS value, d.crc AS crc, k.expire_ms AS expire_ms, k.crc AS ecrc FROM %s AS d LEFT JOIN %s AS k ON k.key = d.key`, t.View, t.Data, t.Keys)
	case t.Crc:
		return fmt.Sprintf(`CREATE VIEW %s AS SELECT d.key AS key, d.value AS value, d.crc AS crc, k.expire_ms AS expire_ms, NULL AS ecrc FROM %s AS d LEFT JOIN %s AS k ON k.key = d.key`, t.View, t.Data, t.Keys)
	}
	return fmt.Sprintf(`CREATE VIEW %s AS SELECT d.key AS key, d.value AS value, k.expire_ms AS expire_ms FROM %s AS d LEFT JOIN %s AS k ON k.key = d.key`, t.View, t.Data, t.Keys)
}

// KeysTableSQL and ExpiryTableSQL create the two TTL tables.
func (t Tables) KeysTableSQL() string {
	if t.V2 {
		return fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (key BLOB PRIMARY KEY NOT NULL CHECK (length(key) BETWEEN 1 AND 65536), expire_ms BLOB NOT NULL CHECK (length(expire_ms) = 8), crc INTEGER NOT NULL DEFAULT 4294967296) STRICT, WITHOUT ROWID`, t.Keys)
	}
	return fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (key BLOB PRIMARY KEY, expire_ms BLOB NOT NULL) WITHOUT ROWID`, t.Keys)
}

// ExpiryTableSQL: see KeysTableSQL.
func (t Tables) ExpiryTableSQL() string {
	if t.V2 {
		return fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (expire_ms BLOB NOT NULL CHECK (length(expire_ms) = 8), key BLOB NOT NULL, PRIMARY KEY (expire_ms, key)) STRICT, WITHOUT ROWID`, t.Expiry)
	}
	return fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (key BLOB PRIMARY KEY) WITHOUT ROWID`, t.Expiry)
}

// cleanup is the trigger body that removes the TTL rows of the key k (an
// SQL expression such as OLD.key). Format 2 never puts key bytes through a
// text operator: the expiry index has the key in a column of its own.
func (t Tables) cleanup(k, guard string) string {
	if !t.V2 {
		return fmt.Sprintf(`
  DELETE FROM %[1]s WHERE key = (SELECT CAST(expire_ms || %[3]s AS BLOB) FROM %[2]s WHERE key = %[3]s);
  DELETE FROM %[2]s WHERE key = %[3]s;`, t.Expiry, t.Keys, k)
	}
	return fmt.Sprintf(`
  DELETE FROM %[1]s WHERE %[4]sexpire_ms = (SELECT expire_ms FROM %[2]s WHERE key = %[3]s) AND key = %[3]s;
  DELETE FROM %[2]s WHERE %[4]skey = %[3]s;`, t.Expiry, t.Keys, k, guard)
}

// TriggersSQL returns the triggers that keep the TTL tables in step with
// the data table whoever writes it (the sqlite3 shell included).
//
// Format 2: an INSERT (REPLACE INTO and INSERT OR REPLACE included, which
// delete the old row without firing DELETE triggers) makes the key
// permanent; an UPDATE of the key or the value makes the old and the new key
// permanent (UPDATE OR REPLACE can overwrite another row); a DELETE removes
// the key's TTL rows. An UPDATE of the checksum column alone (Upgrade) does
// not fire them.
func (t Tables) TriggersSQL() []string {
	if !t.V2 {
		c := t.cleanup("OLD.key", "")
		on := "AFTER UPDATE"
		if t.Crc {
			// A version-1 table being upgraded: filling in the checksum
			// column must not fire it.
			on = "AFTER UPDATE OF key, value"
		}
		return []string{
			fmt.Sprintf("CREATE TRIGGER IF NOT EXISTS %s %s ON %s BEGIN%s\nEND", t.OnUpdate, on, t.Data, c),
			fmt.Sprintf("CREATE TRIGGER IF NOT EXISTS %s AFTER DELETE ON %s BEGIN%s\nEND", t.OnDelete, t.Data, c),
		}
	}
	return []string{
		fmt.Sprintf("CREATE TRIGGER IF NOT EXISTS %s AFTER UPDATE OF key, value ON %s BEGIN%s%s\nEND",
			t.OnUpdate, t.Data, t.cleanup("OLD.key", ""), t.cleanup("NEW.key", "NEW.key IS NOT OLD.key AND ")),
		fmt.Sprintf("CREATE TRIGGER IF NOT EXISTS %s AFTER DELETE ON %s BEGIN%s\nEND", t.OnDelete, t.Data, t.cleanup("OLD.key", "")),
		fmt.Sprintf("CREATE TRIGGER IF NOT EXISTS %s AFTER INSERT ON %s BEGIN%s\nEND", t.OnInsert, t.Data, t.cleanup("NEW.key", "")),
	}
}

// EnableSQL returns the statements that give a column family its TTL state:
// the key index, the expiry index, the triggers, and the read view that
// joins the expiry in. They run inside the transaction of the column
// family's first TTL write.
func (t Tables) EnableSQL() []string {
	q := []string{t.KeysTableSQL(), t.ExpiryTableSQL()}
	q = append(q, t.TriggersSQL()...)
	return append(q, `DROP VIEW IF EXISTS `+t.View, t.TTLViewSQL())
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

// EnabledWhole is Enabled for a caller about to use or create the TTL
// state: a missing key index beside an existing expiry index is half of
// the state dropped outside snkv, which creating the key index anew would
// silently make wrong (every key with a TTL would read as permanent), so
// it is reported as ErrCorrupt naming the missing table.
func (t Tables) EnabledWhole(ctx context.Context, c *engine.Conn) (bool, error) {
	on, err := t.Enabled(ctx, c)
	if on || err != nil {
		return on, err
	}
	_, err = c.Exec(ctx, `SELECT 1 FROM `+t.Expiry+` LIMIT 0`)
	if err == nil {
		// Each of the two statements read the schema as it was when it
		// was compiled: outside a write transaction another connection may
		// have created or dropped the tables in between. Ask again, in
		// one statement, which sees one state of the schema (a scan of
		// sqlite_schema, but only in this rare case).
		var keys, expiry bool
		rows, err := c.Query(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name IN (?1, ?2)`, t.KeysName, t.ExpiryName)
		if err != nil {
			return false, err
		}
		for rows.Next() {
			n := string(rows.Bytes(0))
			keys, expiry = keys || n == t.KeysName, expiry || n == t.ExpiryName
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
			engine.ErrCorrupt, t.KeysName, t.ExpiryName)
	case engine.NoSuchTable(err):
		return false, nil
	}
	return false, err
}

// IndexArgs are the bound parameters that name key's expiry index row for
// SetIndexSQL and DelIndexSQL.
func (t Tables) IndexArgs(expMs int64, key []byte) []any {
	if t.V2 {
		return []any{Encode(expMs), key}
	}
	return []any{IndexKey(expMs, key)}
}

// SetIndexSQL writes an expiry index row (parameters: IndexArgs).
func (t Tables) SetIndexSQL() string {
	if t.V2 {
		return `INSERT OR REPLACE INTO ` + t.Expiry + ` (expire_ms, key) VALUES (?1, ?2)`
	}
	return `INSERT OR REPLACE INTO ` + t.Expiry + ` (key) VALUES (?1)`
}

// DelIndexSQL deletes an expiry index row (parameters: IndexArgs).
func (t Tables) DelIndexSQL() string {
	if t.V2 {
		return `DELETE FROM ` + t.Expiry + ` WHERE expire_ms = ?1 AND key = ?2`
	}
	return `DELETE FROM ` + t.Expiry + ` WHERE key = ?1`
}

// SetKeySQL writes a key index row: key, 8-byte expiry and, in format 2,
// the row's checksum.
func (t Tables) SetKeySQL() string {
	if t.V2 {
		return `INSERT OR REPLACE INTO ` + t.Keys + ` (key, expire_ms, crc) VALUES (?1, ?2, ?3)`
	}
	return `INSERT OR REPLACE INTO ` + t.Keys + ` (key, expire_ms) VALUES (?1, ?2)`
}

// Check verifies that the column family's three tables agree: every key
// index row has a data row and exactly the matching expiry index row, and
// every expiry index row has its key index row. It returns one line per kind
// of disagreement found.
func (t Tables) Check(ctx context.Context, c *engine.Conn) ([]string, error) {
	type check struct{ what, sql string }
	checks := []check{
		{"key index rows without a data row",
			`SELECT count(*) FROM ` + t.Keys + ` AS k WHERE NOT EXISTS (SELECT 1 FROM ` + t.Data + ` AS d WHERE d.key = k.key)`},
		{"key index rows whose expiry is not 8 bytes",
			`SELECT count(*) FROM ` + t.Keys + ` WHERE typeof(expire_ms) <> 'blob' OR length(expire_ms) <> 8`},
	}
	if t.V2 {
		checks = append(checks,
			check{"key index rows without their expiry index row",
				`SELECT count(*) FROM ` + t.Keys + ` AS k WHERE NOT EXISTS (SELECT 1 FROM ` + t.Expiry + ` AS e WHERE e.expire_ms = k.expire_ms AND e.key = k.key)`},
			check{"expiry index rows without a matching key index row",
				`SELECT count(*) FROM ` + t.Expiry + ` AS e WHERE NOT EXISTS (SELECT 1 FROM ` + t.Keys + ` AS k WHERE k.key = e.key AND k.expire_ms = e.expire_ms)`})
	} else {
		checks = append(checks,
			check{"key index rows without their expiry index row",
				`SELECT count(*) FROM ` + t.Keys + ` AS k WHERE NOT EXISTS (SELECT 1 FROM ` + t.Expiry + ` AS e WHERE e.key = CAST(k.expire_ms || k.key AS BLOB))`},
			check{"expiry index rows without a matching key index row",
				`SELECT count(*) FROM ` + t.Expiry + ` AS e WHERE NOT EXISTS (SELECT 1 FROM ` + t.Keys + ` AS k WHERE k.key = substr(e.key, 9) AND k.expire_ms = substr(e.key, 1, 8))`})
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

// CountExpired counts the keys whose expiry index entry is expired as of
// nowMs, reading only the expired head of the expiry index. It works on
// either layout (it asks the file which one the index has).
func (t Tables) CountExpired(ctx context.Context, c *engine.Conn, nowMs int64) (int64, error) {
	rows, err := c.Query(ctx, `SELECT count(*) FROM pragma_table_info(?1) WHERE name = 'expire_ms'`, t.ExpiryName)
	if err != nil {
		return 0, err
	}
	v2 := rows.Next() && rows.Int(0) > 0
	if err := rows.Close(); err != nil {
		return 0, err
	}
	q := `SELECT count(*) FROM ` + t.Expiry + ` WHERE key < ?1`
	if v2 {
		q = `SELECT count(*) FROM ` + t.Expiry + ` WHERE expire_ms < ?1`
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

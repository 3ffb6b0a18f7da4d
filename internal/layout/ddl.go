package layout

import "fmt"

// The DDL of a column family's objects and the statements that write its
// TTL index rows, for each layout (see Objects.Crc and Objects.V2).
// docs/format.md lists the same statements; testdata/ holds what each
// layout generates (go test -run Golden -update rewrites it).

// CatalogSQL creates the catalog of a format-2 file.
const CatalogSQL = `CREATE TABLE "__snkv_catalog" (name TEXT PRIMARY KEY NOT NULL COLLATE NOCASE, kind TEXT NOT NULL DEFAULT 'kv', created_ms INTEGER NOT NULL) STRICT, WITHOUT ROWID`

// MetaSQL creates the meta table.
const MetaSQL = `CREATE TABLE IF NOT EXISTS "__snkv_meta" (name TEXT PRIMARY KEY NOT NULL, value ANY) STRICT, WITHOUT ROWID`

// V1DataTableSQL is the data table of a column family created in a
// version-1 file (which keeps version-1 tables until Upgrade).
func (t *Objects) V1DataTableSQL() string {
	return `CREATE TABLE ` + t.Quoted.Data + ` (key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID`
}

// DataTableSQL is the format-2 table of a column family (or of any hidden
// key-value table made through the same path): BLOB keys of 1 byte to
// 64 KiB, BLOB values, and the CRC-32C of both (NoChecksum, the default,
// when another tool wrote the row). STRICT refuses TEXT, INTEGER and REAL
// cells.
func (t *Objects) DataTableSQL() string {
	return `CREATE TABLE ` + t.Quoted.Data + ` (key BLOB PRIMARY KEY NOT NULL CHECK (length(key) BETWEEN 1 AND 65536), value BLOB NOT NULL, crc INTEGER NOT NULL DEFAULT 4294967296) STRICT, WITHOUT ROWID`
}

// ChecksumTriggerSQL is the trigger that keeps a stale checksum out of the
// file: an UPDATE that changes the key or the value but leaves the checksum
// as it was (the sqlite3 shell cannot compute one) sets it to NoChecksum,
// and the row is then unverified rather than corrupt. snkv's own upserts
// write a new checksum with the value, so the condition is false for them.
func (t *Objects) ChecksumTriggerSQL() string {
	d := t.Quoted.Data
	return `CREATE TRIGGER IF NOT EXISTS ` + t.Quoted.CrcTrigger + ` AFTER UPDATE OF key, value ON ` + d +
		` WHEN NEW.crc IS OLD.crc AND NEW.crc IS NOT 4294967296 AND (NEW.key IS NOT OLD.key OR NEW.value IS NOT OLD.value)` +
		` BEGIN UPDATE ` + d + ` SET crc = 4294967296 WHERE key = NEW.key; END`
}

// PlainViewSQL is the read view of a column family that has never used TTL:
// its rows with a NULL expiry. SQLite flattens it into every query, so it
// costs nothing at run time.
func (t *Objects) PlainViewSQL() string {
	if t.Crc {
		return fmt.Sprintf(`CREATE VIEW %s AS SELECT key, value, crc, NULL AS expire_ms, NULL AS ecrc FROM %s`, t.Quoted.View, t.Quoted.Data)
	}
	return fmt.Sprintf(`CREATE VIEW %s AS SELECT key, value, NULL AS expire_ms FROM %s`, t.Quoted.View, t.Quoted.Data)
}

// TTLViewSQL is the read view of a column family with TTL tables: its rows
// joined with their expiry.
func (t *Objects) TTLViewSQL() string {
	switch {
	case t.Crc && t.V2:
		return fmt.Sprintf(`CREATE VIEW %s AS SELECT d.key AS key, d.value AS value, d.crc AS crc, k.expire_ms AS expire_ms, k.crc AS ecrc FROM %s AS d LEFT JOIN %s AS k ON k.key = d.key`, t.Quoted.View, t.Quoted.Data, t.Quoted.Keys)
	case t.Crc:
		return fmt.Sprintf(`CREATE VIEW %s AS SELECT d.key AS key, d.value AS value, d.crc AS crc, k.expire_ms AS expire_ms, NULL AS ecrc FROM %s AS d LEFT JOIN %s AS k ON k.key = d.key`, t.Quoted.View, t.Quoted.Data, t.Quoted.Keys)
	}
	return fmt.Sprintf(`CREATE VIEW %s AS SELECT d.key AS key, d.value AS value, k.expire_ms AS expire_ms FROM %s AS d LEFT JOIN %s AS k ON k.key = d.key`, t.Quoted.View, t.Quoted.Data, t.Quoted.Keys)
}

// KeysTableSQL and ExpiryTableSQL create the two TTL tables.
func (t *Objects) KeysTableSQL() string {
	if t.V2 {
		return fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (key BLOB PRIMARY KEY NOT NULL CHECK (length(key) BETWEEN 1 AND 65536), expire_ms BLOB NOT NULL CHECK (length(expire_ms) = 8), crc INTEGER NOT NULL DEFAULT 4294967296) STRICT, WITHOUT ROWID`, t.Quoted.Keys)
	}
	return fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (key BLOB PRIMARY KEY, expire_ms BLOB NOT NULL) WITHOUT ROWID`, t.Quoted.Keys)
}

// ExpiryTableSQL: see KeysTableSQL.
func (t *Objects) ExpiryTableSQL() string {
	if t.V2 {
		return fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (expire_ms BLOB NOT NULL CHECK (length(expire_ms) = 8), key BLOB NOT NULL, PRIMARY KEY (expire_ms, key)) STRICT, WITHOUT ROWID`, t.Quoted.Expiry)
	}
	return fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (key BLOB PRIMARY KEY) WITHOUT ROWID`, t.Quoted.Expiry)
}

// cleanup is the trigger body that removes the TTL rows of the key k (an
// SQL expression such as OLD.key). Format 2 never puts key bytes through a
// text operator: the expiry index has the key in a column of its own.
func (t *Objects) cleanup(k, guard string) string {
	if !t.V2 {
		return fmt.Sprintf(`
  DELETE FROM %[1]s WHERE key = (SELECT CAST(expire_ms || %[3]s AS BLOB) FROM %[2]s WHERE key = %[3]s);
  DELETE FROM %[2]s WHERE key = %[3]s;`, t.Quoted.Expiry, t.Quoted.Keys, k)
	}
	return fmt.Sprintf(`
  DELETE FROM %[1]s WHERE %[4]sexpire_ms = (SELECT expire_ms FROM %[2]s WHERE key = %[3]s) AND key = %[3]s;
  DELETE FROM %[2]s WHERE %[4]skey = %[3]s;`, t.Quoted.Expiry, t.Quoted.Keys, k, guard)
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
func (t *Objects) TriggersSQL() []string {
	if !t.V2 {
		c := t.cleanup("OLD.key", "")
		on := "AFTER UPDATE"
		if t.Crc {
			// A version-1 table being upgraded: filling in the checksum
			// column must not fire it.
			on = "AFTER UPDATE OF key, value"
		}
		return []string{
			fmt.Sprintf("CREATE TRIGGER IF NOT EXISTS %s %s ON %s BEGIN%s\nEND", t.Quoted.TTLTriggers[OnUpdate], on, t.Quoted.Data, c),
			fmt.Sprintf("CREATE TRIGGER IF NOT EXISTS %s AFTER DELETE ON %s BEGIN%s\nEND", t.Quoted.TTLTriggers[OnDelete], t.Quoted.Data, c),
		}
	}
	return []string{
		fmt.Sprintf("CREATE TRIGGER IF NOT EXISTS %s AFTER UPDATE OF key, value ON %s BEGIN%s%s\nEND",
			t.Quoted.TTLTriggers[OnUpdate], t.Quoted.Data, t.cleanup("OLD.key", ""), t.cleanup("NEW.key", "NEW.key IS NOT OLD.key AND ")),
		fmt.Sprintf("CREATE TRIGGER IF NOT EXISTS %s AFTER DELETE ON %s BEGIN%s\nEND", t.Quoted.TTLTriggers[OnDelete], t.Quoted.Data, t.cleanup("OLD.key", "")),
		fmt.Sprintf("CREATE TRIGGER IF NOT EXISTS %s AFTER INSERT ON %s BEGIN%s\nEND", t.Quoted.TTLTriggers[OnInsert], t.Quoted.Data, t.cleanup("NEW.key", "")),
	}
}

// EnableSQL returns the statements that give a column family its TTL state:
// the key index, the expiry index, the triggers, and the read view that
// joins the expiry in. They run inside the transaction of the column
// family's first TTL write.
func (t *Objects) EnableSQL() []string {
	q := []string{t.KeysTableSQL(), t.ExpiryTableSQL()}
	q = append(q, t.TriggersSQL()...)
	return append(q, `DROP VIEW IF EXISTS `+t.Quoted.View, t.TTLViewSQL())
}

// DropSQL removes every object of the column family, TTL state included.
func (t *Objects) DropSQL() []string {
	return []string{
		`DROP VIEW IF EXISTS ` + t.Quoted.View,
		`DROP TABLE IF EXISTS ` + t.Quoted.Data, // its triggers go with it
		`DROP TABLE IF EXISTS ` + t.Quoted.Keys,
		`DROP TABLE IF EXISTS ` + t.Quoted.Expiry,
	}
}

// SetIndexSQL writes an expiry index row (parameters: expiry.IndexArgs).
func (t *Objects) SetIndexSQL() string {
	if t.V2 {
		return `INSERT OR REPLACE INTO ` + t.Quoted.Expiry + ` (expire_ms, key) VALUES (?1, ?2)`
	}
	return `INSERT OR REPLACE INTO ` + t.Quoted.Expiry + ` (key) VALUES (?1)`
}

// DelIndexSQL deletes an expiry index row (parameters: expiry.IndexArgs).
func (t *Objects) DelIndexSQL() string {
	if t.V2 {
		return `DELETE FROM ` + t.Quoted.Expiry + ` WHERE expire_ms = ?1 AND key = ?2`
	}
	return `DELETE FROM ` + t.Quoted.Expiry + ` WHERE key = ?1`
}

// SetKeySQL writes a key index row: key, 8-byte expiry and, in format 2,
// the row's checksum.
func (t *Objects) SetKeySQL() string {
	if t.V2 {
		return `INSERT OR REPLACE INTO ` + t.Quoted.Keys + ` (key, expire_ms, crc) VALUES (?1, ?2, ?3)`
	}
	return `INSERT OR REPLACE INTO ` + t.Quoted.Keys + ` (key, expire_ms) VALUES (?1, ?2)`
}

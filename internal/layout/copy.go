package layout

import "fmt"

// The expiry copy: a column family with TTL tables keeps, in a column of
// its data table, a copy of each key's key index row (its expiry and that
// row's checksum), so that a point read finds the expiry in the row it
// reads anyway instead of descending the key index too. The copy is a
// cache that is either absent (NULL) or equal to the key index row:
//
//   - snkv writes it only below SQL (the B-tree layer), together with the
//     key index row, in one transaction;
//   - any write by SQL (the sqlite3 shell, another tool, snkv's own SQL
//     fallback) to the key index row of a key, or to its data row's key,
//     value or copy, sets the copy to NULL (CopyTriggersSQL);
//   - a read that finds no copy reads the key index, as before.
//
// The copy is 12 bytes: the 8-byte big-endian expiry, then the key index
// row's checksum as 4 bytes big-endian (CopyLen). A read checks the
// checksum against the key and the expiry, as it checks a key index row's,
// so that a damaged copy is ErrCorrupt, never another expiry.

// CopyFormat is the format version of a file in which a column family may
// have the expiry copy: format 2 and the copy. The transaction that first
// adds a copy column to a file sets its format to CopyFormat.
const CopyFormat = 3

// CopyFormatSQL sets the meta table's format row to CopyFormat in a
// format-2 file (and leaves a file already there as it is).
const CopyFormatSQL = `UPDATE "` + MetaTable + `" SET value = 3 WHERE name = 'format' AND value = 2`

// CopyColumn is the name of the data table's expiry copy column.
const CopyColumn = "ttl"

// CopyLen is the length of an expiry copy: the expiry (8 bytes) and the
// key index row's checksum (4 bytes).
const CopyLen = 12

// Prefixes of the copy's triggers, and their positions in
// Names.CopyTriggers.
const (
	CopyKeysInsertPrefix = "__snkv_ttl_ci__" // a key index row inserted (REPLACE included)
	CopyKeysUpdatePrefix = "__snkv_ttl_cu__" // a key index row updated
	CopyKeysDeletePrefix = "__snkv_ttl_cd__" // a key index row deleted
	CopyDataInsertPrefix = "__snkv_ttl_cw__" // a data row inserted by SQL with a copy
	CopyDataUpdatePrefix = "__snkv_ttl_cx__" // a data row's key, value or copy updated by SQL
)

// Positions of the copy's triggers in Names.CopyTriggers.
const (
	CopyKeysInsert = iota
	CopyKeysUpdate
	CopyKeysDelete
	CopyDataInsert
	CopyDataUpdate
	nCopyTriggers
)

// copyPrefixes are the prefixes of the copy's triggers, in the order of
// Names.CopyTriggers.
var copyPrefixes = [nCopyTriggers]string{CopyKeysInsertPrefix, CopyKeysUpdatePrefix, CopyKeysDeletePrefix, CopyDataInsertPrefix, CopyDataUpdatePrefix}

// AddCopySQL adds the expiry copy column to the data table (ALTER TABLE …
// ADD COLUMN: no row is rewritten; every row reads NULL, no copy).
func (t *Objects) AddCopySQL() string {
	return `ALTER TABLE ` + t.Quoted.Data + ` ADD COLUMN ` + CopyColumn + ` BLOB`
}

// DataTableCopySQL is the CREATE statement SQLite keeps for a format-2
// data table once AddCopySQL has run.
func (t *Objects) DataTableCopySQL() string {
	return `CREATE TABLE ` + t.Quoted.Data + ` (key BLOB PRIMARY KEY NOT NULL CHECK (length(key) BETWEEN 1 AND 65536), value BLOB NOT NULL, crc INTEGER NOT NULL DEFAULT 4294967296, ` + CopyColumn + ` BLOB) STRICT, WITHOUT ROWID`
}

// CopyTriggersSQL returns the triggers that keep the expiry copy absent or
// true whoever writes the file: the three on the key index clear the copy
// of a key whose key index row SQL inserts, replaces, updates or deletes;
// the two on the data table clear a copy that SQL writes or that a row
// keeps while SQL changes its key or value. snkv writes copies only below
// SQL, where no trigger fires.
func (t *Objects) CopyTriggersSQL() []string {
	d, k, q := t.Quoted.Data, t.Quoted.Keys, t.Quoted.CopyTriggers
	clear := func(key string) string {
		return fmt.Sprintf(`UPDATE %s SET %s = NULL WHERE key = %s AND %s IS NOT NULL;`, d, CopyColumn, key, CopyColumn)
	}
	return []string{
		fmt.Sprintf(`CREATE TRIGGER IF NOT EXISTS %s AFTER INSERT ON %s BEGIN %s END`, q[CopyKeysInsert], k, clear("NEW.key")),
		fmt.Sprintf(`CREATE TRIGGER IF NOT EXISTS %s AFTER UPDATE ON %s BEGIN %s %s END`, q[CopyKeysUpdate], k, clear("OLD.key"), clear("NEW.key")),
		fmt.Sprintf(`CREATE TRIGGER IF NOT EXISTS %s AFTER DELETE ON %s BEGIN %s END`, q[CopyKeysDelete], k, clear("OLD.key")),
		fmt.Sprintf(`CREATE TRIGGER IF NOT EXISTS %s AFTER INSERT ON %s WHEN NEW.%s IS NOT NULL BEGIN %s END`, q[CopyDataInsert], d, CopyColumn, clear("NEW.key")),
		fmt.Sprintf(`CREATE TRIGGER IF NOT EXISTS %s AFTER UPDATE OF key, value, %s ON %s WHEN NEW.%s IS NOT NULL BEGIN %s END`, q[CopyDataUpdate], CopyColumn, d, CopyColumn, clear("NEW.key")),
	}
}

// EnableCopySQL returns the statements that give a format-2 column family
// with TTL tables its expiry copy: the column, then its triggers.
func (t *Objects) EnableCopySQL() []string {
	return append([]string{t.AddCopySQL()}, t.CopyTriggersSQL()...)
}

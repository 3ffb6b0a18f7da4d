package v1fixture

import (
	"database/sql"
	"encoding/binary"
	"fmt"
	"strings"

	_ "modernc.org/sqlite" // the database/sql driver: the fixture writes as another tool would
)

// Row is one key-value pair; ExpMs is its absolute expiry in milliseconds
// since the Unix epoch, or 0 for a permanent key.
type Row struct {
	Key, Value []byte
	ExpMs      int64
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// Create writes a new version-1 store at path holding the column families
// of cfs ("default" is always created) with their rows, created at
// createdMs.
func Create(path string, createdMs int64, cfs map[string][]Row) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	// As the version-1 library created its files.
	if _, err := db.Exec(`PRAGMA auto_vacuum = INCREMENTAL`); err != nil {
		return err
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	exec := func(q string, args ...any) {
		if err == nil {
			_, err = tx.Exec(q, args...)
			if err != nil {
				err = fmt.Errorf("%s: %w", q, err)
			}
		}
	}
	exec(`PRAGMA application_id = 1936616310`)
	exec(`PRAGMA user_version = 1`)
	exec(`CREATE TABLE "__snkv_catalog" (name TEXT PRIMARY KEY NOT NULL COLLATE NOCASE, kind TEXT NOT NULL DEFAULT 'kv', created_ms INTEGER NOT NULL) WITHOUT ROWID`)
	if _, ok := cfs["default"]; !ok {
		cfs["default"] = nil
	}
	for name, rows := range cfs {
		d, v := quote(name), quote("__snkv_view__"+name)
		k, e := quote("__snkv_ttl_k__"+name), quote("__snkv_ttl_e__"+name)
		exec(`CREATE TABLE ` + d + ` (key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID`)
		exec(`INSERT INTO "__snkv_catalog" (name, kind, created_ms) VALUES (?, 'kv', ?)`, name, createdMs)
		ttl := false
		for _, r := range rows {
			ttl = ttl || r.ExpMs > 0
		}
		if !ttl {
			exec(`CREATE VIEW ` + v + ` AS SELECT key, value, NULL AS expire_ms FROM ` + d)
		} else {
			cleanup := fmt.Sprintf(`
  DELETE FROM %[1]s WHERE key = (SELECT CAST(expire_ms || OLD.key AS BLOB) FROM %[2]s WHERE key = OLD.key);
  DELETE FROM %[2]s WHERE key = OLD.key;`, e, k)
			exec(`CREATE TABLE IF NOT EXISTS ` + k + ` (key BLOB PRIMARY KEY, expire_ms BLOB NOT NULL) WITHOUT ROWID`)
			exec(`CREATE TABLE IF NOT EXISTS ` + e + ` (key BLOB PRIMARY KEY) WITHOUT ROWID`)
			exec(`CREATE TRIGGER IF NOT EXISTS ` + quote("__snkv_ttl_tu__"+name) + ` AFTER UPDATE ON ` + d + ` BEGIN` + cleanup + "\nEND")
			exec(`CREATE TRIGGER IF NOT EXISTS ` + quote("__snkv_ttl_td__"+name) + ` AFTER DELETE ON ` + d + ` BEGIN` + cleanup + "\nEND")
			exec(`CREATE VIEW ` + v + ` AS SELECT d.key AS key, d.value AS value, k.expire_ms AS expire_ms FROM ` + d + ` AS d LEFT JOIN ` + k + ` AS k ON k.key = d.key`)
		}
		for _, r := range rows {
			val := r.Value
			if val == nil {
				val = []byte{}
			}
			exec(`INSERT INTO `+d+` (key, value) VALUES (?, ?)`, r.Key, val)
			if r.ExpMs > 0 {
				exp := binary.BigEndian.AppendUint64(nil, uint64(r.ExpMs))
				exec(`INSERT INTO `+k+` (key, expire_ms) VALUES (?, ?)`, r.Key, exp)
				exec(`INSERT INTO `+e+` (key) VALUES (?)`, append(exp, r.Key...))
			}
		}
	}
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	_, err = db.Exec(`PRAGMA journal_mode = WAL`)
	return err
}

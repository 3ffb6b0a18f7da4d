package columnfamily

import (
	"context"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
)

// shape is the layout of one column family's objects in the file (format
// 1, format 2, or a version-1 table part way through Upgrade) and the SQL
// that goes with it.
type shape struct {
	t    expiry.Tables // names, and the Crc and V2 layout flags
	q    queries
	fast engine.Tables // the same names, for writes and scans below SQL
}

type queries struct {
	get, exists, put, insert, del, delLive, lazyDel, count string
	// upsert is put without the catalog check, for a write transaction
	// that has checked the column family already (ColumnFamily.verify).
	// A put with the check is an INSERT … SELECT, which SQLite runs with a
	// statement journal (a copy of every page it changes, for a rollback
	// of the statement alone); a single-row INSERT … VALUES needs none.
	upsert                             string
	current                            string // is the catalog row still this column family's?
	setKey, setIndex, delKey, delIndex string
	setCrc, flipTTL                    string
	scans                              [3][3][2]string
	// holder reads the view from its first row without comparing keys:
	// what a scan read below SQL steps to hold its transaction
	// (engine.ScanSpec.Holder).
	holder string
}

// Column positions in the results of the read queries. With a checksum
// column the view has key, value, crc, expire_ms, ecrc.
const (
	getValue, getExp, getCrc, getEcrc = 0, 1, 2, 3 // get
	exExp, exEcrc                     = 0, 1       // exists
	scKey, scValue, scExp, scCrc      = 0, 1, 2, 3 // scans
	scEcrc                            = 4
)

func newShape(name string, crc, v2 bool) *shape {
	t := expiry.TablesFor(name)
	t.Crc, t.V2 = crc, v2
	sh := &shape{t: t}
	sh.fast = engine.Tables{Data: t.CF, Crc: crc, V2: v2, Keys: t.KeysName, Expiry: t.ExpiryName,
		CrcTrigger:  ChecksumTriggerPrefix + name,
		TTLTriggers: [3]string{t.OnInsertName, t.OnUpdateName, t.OnDeleteName}}
	sh.t.Fast = &sh.fast
	sel, exists := `SELECT value, expire_ms`, `SELECT expire_ms`
	// A single put checks, in the same statement, that the column family
	// is still the one this handle was opened on (name ?3, stamp ?4; see
	// ColumnFamily.current). The checksum is ?5.
	stillThere := ` WHERE EXISTS (SELECT 1 FROM ` + catalog + ` WHERE name = ?3 AND created_ms = ?4)`
	put := `INSERT INTO ` + t.Data + ` (key, value) SELECT ?1, ?2` + stillThere + ` ON CONFLICT (key) DO UPDATE SET value = excluded.value`
	insert := `INSERT INTO ` + t.Data + ` (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO NOTHING`
	upsert := `INSERT INTO ` + t.Data + ` (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`
	scan := `SELECT key, value, expire_ms`
	if crc {
		sel, exists, scan = `SELECT value, expire_ms, crc, ecrc`, `SELECT expire_ms, ecrc`, `SELECT key, value, expire_ms, crc, ecrc`
		put = `INSERT INTO ` + t.Data + ` (key, value, crc) SELECT ?1, ?2, ?5` + stillThere + ` ON CONFLICT (key) DO UPDATE SET value = excluded.value, crc = excluded.crc`
		insert = `INSERT INTO ` + t.Data + ` (key, value, crc) VALUES (?1, ?2, ?5) ON CONFLICT (key) DO NOTHING`
		upsert = `INSERT INTO ` + t.Data + ` (key, value, crc) VALUES (?1, ?2, ?5) ON CONFLICT (key) DO UPDATE SET value = excluded.value, crc = excluded.crc`
	}
	sh.q = queries{
		get:     sel + ` FROM ` + t.View + ` WHERE key = ?1`,
		exists:  exists + ` FROM ` + t.View + ` WHERE key = ?1`,
		put:     put,
		upsert:  upsert,
		current: `SELECT count(*) FROM ` + catalog + ` WHERE name = ?1 AND created_ms = ?2`,
		insert:  insert,
		del:     `DELETE FROM ` + t.Data + ` WHERE key = ?1`,
		// These two read the expiry through the view, not the key index:
		// the view is redefined when the column family gets TTL tables, and
		// SQLite re-prepares statements that use it, so they stay right
		// even when another process or handle made the tables. On a
		// column family without TTL the condition is constant and free.
		delLive:  `DELETE FROM ` + t.Data + ` WHERE key = ?1 AND NOT EXISTS (SELECT 1 FROM ` + t.View + ` WHERE key = ?1 AND expire_ms <= ?2) AND EXISTS (SELECT 1 FROM ` + catalog + ` WHERE name = ?3 AND created_ms = ?4)`,
		lazyDel:  `DELETE FROM ` + t.Data + ` WHERE key = ?1 AND EXISTS (SELECT 1 FROM ` + t.View + ` WHERE key = ?1 AND expire_ms <= ?2)`,
		count:    `SELECT count(*) FROM ` + t.View + ` WHERE expire_ms IS NULL OR expire_ms > ?1`,
		holder:   `SELECT 1 FROM ` + t.View,
		setKey:   t.SetKeySQL(),
		setIndex: t.SetIndexSQL(),
		delKey:   `DELETE FROM ` + t.Keys + ` WHERE key = ?1`,
		delIndex: t.DelIndexSQL(),
		setCrc:   `UPDATE ` + t.Data + ` SET crc = ?2 WHERE key = ?1 AND crc IS NULL`,
		// crc XOR ?2 (SQLite has no XOR operator); a version-1 table has no
		// checksum to change.
		flipTTL: `SELECT 1`,
	}
	if crc {
		sh.q.flipTTL = `UPDATE ` + t.Data + ` SET crc = (crc | ?2) - (crc & ?2) WHERE key = ?1 AND crc IS NOT NULL`
	}
	lowers := [3]string{"", "key >= ?1", "key > ?1"}
	uppers := [3]string{"", "key <= ?2", "key < ?2"}
	for lo := range 3 {
		for hi := range 3 {
			for desc := range 2 {
				q := scan + ` FROM ` + t.View
				switch {
				case lo > 0 && hi > 0:
					q += ` WHERE ` + lowers[lo] + ` AND ` + uppers[hi]
				case lo > 0:
					q += ` WHERE ` + lowers[lo]
				case hi > 0:
					q += ` WHERE ` + uppers[hi]
				}
				q += ` ORDER BY key`
				if desc == 1 {
					q += ` DESC`
				}
				sh.q.scans[lo][hi][desc] = q
			}
		}
	}
	return sh
}

// sum is the bound checksum parameter of a write of key and value: the
// row's CRC-32C, or nil (NULL) for a version-1 table, which has no column
// for it (extra parameters are ignored).
func (sh *shape) sum(key, value []byte, hasTTL bool) any {
	if !sh.t.Crc {
		return nil
	}
	return dataSum(key, value, hasTTL)
}

// keySum is the checksum parameter of a key index row.
func (sh *shape) keySum(key, exp []byte) any {
	if !sh.t.V2 {
		return nil
	}
	return rowSum(key, exp)
}

// readShape asks the file how column family name is laid out: whether its
// table has the checksum column, and whether it is in the format-2 (STRICT)
// form.
func readShape(ctx context.Context, c *engine.Conn, name string) (crc, v2 bool, err error) {
	rows, err := c.Query(ctx, `SELECT (SELECT count(*) FROM pragma_table_info(?1) WHERE name = 'crc'), (SELECT count(*) FROM pragma_table_list(?1) WHERE schema = 'main' AND strict = 1)`, name)
	if err != nil {
		return false, false, err
	}
	if rows.Next() {
		crc, v2 = rows.Int(0) > 0, rows.Int(1) > 0
	}
	return crc, v2 && crc, rows.Close()
}

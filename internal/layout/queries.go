package layout

// Queries are the statements of a column family's data path in one layout:
// what its handles read and write through SQL (the engine runs some of them
// below SQL when it can; see engine.Conn.Upsert, QueryScan).
type Queries struct {
	// Get and Exists read a key's row through the view (columns: see
	// GetValue, ExistsExpiry); Count counts its live keys as of ?1.
	Get, Exists, Count string
	// Put writes a key with no TTL if the catalog still holds the column
	// family the handle was opened on (name ?3, stamp ?4; checksum ?5)
	// and, when FeedsGen is set, the feeds' generation in the meta table
	// is ?6 (or ?6 is NULL): the statement of a lone put, which checks in
	// its own write that no feed was turned on since the writer loaded
	// them (docs/changes.md). A put with the check is an INSERT … SELECT,
	// which SQLite runs with a statement journal (a copy of every page it
	// changes, for a rollback of the statement alone); a single-row
	// INSERT … VALUES needs none.
	Put string
	// FeedsGen says Put and DelLive check the feeds' generation: the
	// layouts of a file that has the meta table (a version-1 file may
	// not, and has no feed while it does not).
	FeedsGen bool
	// Upsert is Put without the catalog check, for a write transaction
	// that has checked the column family already.
	Upsert string
	// Insert writes a key only if it is missing.
	Insert string
	// Current counts the catalog rows of name ?1 and stamp ?2: is the
	// column family still the one a handle was opened on?
	Current string
	// Del deletes a key. DelLive deletes it unless it has expired as of
	// ?2, if the column family is still current (?3, ?4) and, with
	// FeedsGen, the feeds' generation is ?5 (or ?5 is NULL); LazyDel deletes
	// it only if it has expired as of ?2. Both read the expiry through the
	// view, not the key index: the view is redefined when the column
	// family gets TTL tables, and SQLite re-prepares statements that use
	// it, so they stay right even when another process or handle made the
	// tables. On a column family without TTL the condition is constant and
	// free.
	Del, DelLive, LazyDel string
	// SetKey, SetIndex, DelKey and DelIndex write and delete the TTL index
	// rows of a key.
	SetKey, SetIndex, DelKey, DelIndex string
	// SetCrc fills in a missing checksum (Upgrade). FlipTTL mixes ?2 into
	// a row's checksum (crc XOR ?2: SQLite has no XOR operator), when a
	// key gains or loses its TTL; a version-1 table has no checksum to
	// change.
	SetCrc, FlipTTL string
	// Holder names the view and returns one row without reading it (its
	// WHERE is false, so the view's cursors are neither opened nor
	// positioned): what a scan read below SQL steps to begin and hold its
	// read transaction and check the schema (engine.ScanSpec.Holder).
	Holder string
	// scans holds Scan's statements.
	scans [nBounds][nBounds][2]string
}

// Column positions in the results of the read statements. With a checksum
// column the view has key, value, crc, expire_ms and ecrc.
const (
	GetValue, GetExpiry, GetCrc, GetEcrc              = 0, 1, 2, 3    // Get
	ExistsExpiry, ExistsEcrc                          = 0, 1          // Exists
	ScanKey, ScanValue, ScanExpiry, ScanCrc, ScanEcrc = 0, 1, 2, 3, 4 // Scan
)

// BoundKind says what an end of a scan's key range is.
type BoundKind uint8

const (
	Open      BoundKind = iota // no bound
	Inclusive                  // the bound key is in the range
	Exclusive                  // the bound key is not
	nBounds
)

// Scan is the statement of a scan of the keys between a lower bound (?1)
// of kind lo and an upper bound (?2) of kind hi, in descending order when
// desc is set (columns: see ScanKey).
func (q *Queries) Scan(lo, hi BoundKind, desc bool) string {
	d := 0
	if desc {
		d = 1
	}
	return q.scans[lo][hi][d]
}

// Queries returns the data path's statements for t.
func (t *Objects) Queries() Queries {
	catalog := Quote(CatalogTable)
	data, view := t.Quoted.Data, t.Quoted.View
	get, exists, scan := `SELECT value, expire_ms`, `SELECT expire_ms`, `SELECT key, value, expire_ms`
	stillThere := ` WHERE EXISTS (SELECT 1 FROM ` + catalog + ` WHERE name = ?3 AND created_ms = ?4)`
	delThere := ` AND EXISTS (SELECT 1 FROM ` + catalog + ` WHERE name = ?3 AND created_ms = ?4)`
	// A file with the meta table: the layouts with a checksum (format 2,
	// and a version-1 table Upgrade has reached, which made the table
	// first).
	feedsGen := t.Crc || t.V2
	if feedsGen {
		stillThere += feedsSame(6)
		delThere += feedsSame(5)
	}
	q := Queries{
		Put:     `INSERT INTO ` + data + ` (key, value) SELECT ?1, ?2` + stillThere + ` ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
		Insert:  `INSERT INTO ` + data + ` (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO NOTHING`,
		Upsert:  `INSERT INTO ` + data + ` (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
		Current: `SELECT count(*) FROM ` + catalog + ` WHERE name = ?1 AND created_ms = ?2`,
		Del:     `DELETE FROM ` + data + ` WHERE key = ?1`,
		DelLive: `DELETE FROM ` + data + ` WHERE key = ?1 AND NOT EXISTS (SELECT 1 FROM ` + view + ` WHERE key = ?1 AND expire_ms <= ?2)` + delThere,
		LazyDel: `DELETE FROM ` + data + ` WHERE key = ?1 AND EXISTS (SELECT 1 FROM ` + view + ` WHERE key = ?1 AND expire_ms <= ?2)`,
		Count:   `SELECT count(*) FROM ` + view + ` WHERE expire_ms IS NULL OR expire_ms > ?1`,
		Holder:  `SELECT EXISTS (SELECT 1 FROM ` + view + ` WHERE 0)`,
		SetKey:  t.SetKeySQL(),
		// SetIndex and DelIndex take expiry.IndexArgs.
		SetIndex: t.SetIndexSQL(),
		DelKey:   `DELETE FROM ` + t.Quoted.Keys + ` WHERE key = ?1`,
		DelIndex: t.DelIndexSQL(),
		SetCrc:   `UPDATE ` + data + ` SET crc = ?2 WHERE key = ?1 AND crc IS NULL`,
		FlipTTL:  `SELECT 1`,
		FeedsGen: feedsGen,
	}
	if t.Crc {
		get, exists, scan = `SELECT value, expire_ms, crc, ecrc`, `SELECT expire_ms, ecrc`, `SELECT key, value, expire_ms, crc, ecrc`
		q.Put = `INSERT INTO ` + data + ` (key, value, crc) SELECT ?1, ?2, ?5` + stillThere + ` ON CONFLICT (key) DO UPDATE SET value = excluded.value, crc = excluded.crc`
		q.Insert = `INSERT INTO ` + data + ` (key, value, crc) VALUES (?1, ?2, ?5) ON CONFLICT (key) DO NOTHING`
		q.Upsert = `INSERT INTO ` + data + ` (key, value, crc) VALUES (?1, ?2, ?5) ON CONFLICT (key) DO UPDATE SET value = excluded.value, crc = excluded.crc`
		q.FlipTTL = `UPDATE ` + data + ` SET crc = (crc | ?2) - (crc & ?2) WHERE key = ?1 AND crc IS NOT NULL`
	}
	q.Get = get + ` FROM ` + view + ` WHERE key = ?1`
	q.Exists = exists + ` FROM ` + view + ` WHERE key = ?1`
	lowers := [nBounds]string{Inclusive: "key >= ?1", Exclusive: "key > ?1"}
	uppers := [nBounds]string{Inclusive: "key <= ?2", Exclusive: "key < ?2"}
	for lo := range nBounds {
		for hi := range nBounds {
			for desc := range 2 {
				s := scan + ` FROM ` + view
				switch {
				case lo != Open && hi != Open:
					s += ` WHERE ` + lowers[lo] + ` AND ` + uppers[hi]
				case lo != Open:
					s += ` WHERE ` + lowers[lo]
				case hi != Open:
					s += ` WHERE ` + uppers[hi]
				}
				s += ` ORDER BY key`
				if desc == 1 {
					s += ` DESC`
				}
				q.scans[lo][hi][desc] = s
			}
		}
	}
	return q
}

// FeedsGenRow is the meta table's row holding the change feed's
// generation, bumped by every change of the feeds (changelog.Feeds).
const FeedsGenRow = "changefeed"

// feedsSame is the condition that the change feed's generation row in the
// meta table (changelog.Feeds; 0 when missing) holds parameter ?n, or that
// ?n is NULL.
func feedsSame(n int) string {
	p := "?" + string(rune('0'+n))
	return ` AND (` + p + ` IS NULL OR coalesce((SELECT value FROM ` + Quote(MetaTable) + ` WHERE name = '` + FeedsGenRow + `'), 0) = ` + p + `)`
}

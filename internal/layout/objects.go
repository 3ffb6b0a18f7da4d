package layout

import "strings"

// Names of snkv's own tables and name prefixes of the objects that go with
// each column family. Every one starts with "__", which column family names
// may not.
const (
	// CatalogTable lists the column families and hidden tables of a store.
	CatalogTable = "__snkv_catalog"
	// MetaTable holds snkv's own settings, the format version first. It
	// exists from format 2 on; a file without it is version 1.
	MetaTable = "__snkv_meta"
	// HiddenPrefix starts the name of every hidden table a layer above the
	// store keeps: HiddenPrefix + kind + ":" + name.
	HiddenPrefix = "__snkv_"

	ViewPrefix            = "__snkv_view__"   // the read path of a column family
	ChecksumTriggerPrefix = "__snkv_crc__"    // clears a row's checksum when another tool changes it
	KeysPrefix            = "__snkv_ttl_k__"  // key -> 8-byte expiry
	ExpiryPrefix          = "__snkv_ttl_e__"  // (8-byte expiry, key), sorted by expiry
	OnInsertPrefix        = "__snkv_ttl_ti__" // format 2 only
	OnUpdatePrefix        = "__snkv_ttl_tu__"
	OnDeletePrefix        = "__snkv_ttl_td__"
)

// Rows of the meta table besides the format version.
const (
	// SealHeaderRow holds the encryption header.
	SealHeaderRow = "encryption"
	// ScrubRow says a conversion's scrub is still to run: the file may
	// still hold the form the values had before (in the clear, or sealed
	// under a data key a re-key retired) and the headers that wrapped a
	// data key under a retired secret.
	ScrubRow = "encryption scrub"
	// StampRow holds the largest creation stamp (the catalog's created_ms)
	// ever given out, so that a column family dropped and created again in
	// the same millisecond still gets a stamp of its own.
	StampRow = "last_created_ms"
)

// SealedMarker is the meta table row that makes hidden table table sealed.
func SealedMarker(table string) string { return "sealed:" + table }

// HiddenTableName returns the table name of the hidden table name of the
// given kind.
func HiddenTableName(kind, name string) string { return HiddenPrefix + kind + ":" + name }

// IsHidden reports whether a catalog name is a hidden table's.
func IsHidden(table string) bool { return strings.HasPrefix(table, HiddenPrefix) }

// MaxKeySize is the longest key, in bytes: the CHECK of a format-2 table
// allows 1 to 65536 bytes.
const MaxKeySize = 64 << 10

// NoChecksum is the checksum column's value for a row that has none (it
// was written by another tool): 2^32, outside the range of a stored
// checksum (a signed 32-bit integer). In format 2 the column is NOT NULL,
// so that damage to a row's header that turns its checksum into NULL is
// caught rather than read as "unverified".
const NoChecksum int64 = 1 << 32

// Positions of the TTL triggers in Names.TTLTriggers.
const (
	OnInsert = iota
	OnUpdate
	OnDelete
)

// Names are the names of one column family's objects.
type Names struct {
	Data         string // the data table: key, value and, with Crc, crc
	Keys, Expiry string // the TTL key and expiry index tables
	View         string // the read view: the data rows with their expiry
	CrcTrigger   string // the checksum trigger (an UPDATE trigger)
	// TTLTriggers are the INSERT (format 2 only), UPDATE and DELETE
	// triggers that remove a key's TTL rows when its data row is written
	// or deleted, at OnInsert, OnUpdate and OnDelete.
	TTLTriggers [3]string
	// CopyTriggers are the triggers that keep the data table's expiry copy
	// absent or true (CopyTriggersSQL), at CopyKeysInsert … CopyDataUpdate.
	CopyTriggers [nCopyTriggers]string
}

// Objects names the SQL objects of one column family (or hidden table) and
// says which layout they have: the one type every package below the public
// API uses for them. The SQL of this package, expiry's and the engine's
// writes and scans below SQL (which proceed only when the file holds
// exactly these objects in the shapes snkv creates) all read it.
type Objects struct {
	// Names are the names as stored in sqlite_schema (for look-ups and the
	// B-tree layer); Data is the column family's own name.
	Names
	// Quoted are the same names quoted as SQL identifiers.
	Quoted Names
	// Crc is set when the data table has the checksum column (format 2, or
	// a version-1 table part way through Upgrade).
	Crc bool
	// V2 is set for the format-2 layout: STRICT tables, a two-column expiry
	// index (expire_ms, key), a checksummed key index, and an INSERT
	// trigger besides the UPDATE and DELETE ones. Without it the objects
	// have the version-1 layout.
	V2 bool
}

// For returns the objects of column family name in the layout crc and v2
// say (both false: version 1; both true: format 2).
func For(name string, crc, v2 bool) Objects {
	n := Names{
		Data:        name,
		Keys:        KeysPrefix + name,
		Expiry:      ExpiryPrefix + name,
		View:        ViewPrefix + name,
		CrcTrigger:  ChecksumTriggerPrefix + name,
		TTLTriggers: [3]string{OnInsertPrefix + name, OnUpdatePrefix + name, OnDeletePrefix + name},
	}
	q := Names{
		Data:       Quote(n.Data),
		Keys:       Quote(n.Keys),
		Expiry:     Quote(n.Expiry),
		View:       Quote(n.View),
		CrcTrigger: Quote(n.CrcTrigger),
	}
	for i, t := range n.TTLTriggers {
		q.TTLTriggers[i] = Quote(t)
	}
	for i, p := range copyPrefixes {
		n.CopyTriggers[i] = p + name
		q.CopyTriggers[i] = Quote(n.CopyTriggers[i])
	}
	return Objects{Names: n, Quoted: q, Crc: crc, V2: v2}
}

// Quote quotes name as an SQL identifier.
func Quote(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

package btree

// Table names the tables of one column family and the triggers on its data
// table whose effect the fast path reproduces. The fast path writes or
// reads a column family only when the file holds exactly these objects in
// the shapes snkv creates; anything else (a trigger a user added, a TTL
// table without its triggers, a version-1 TTL layout) sends the caller to
// its SQL statements.
type Table struct {
	Data string // the data table: key, value and, with Crc, crc
	Crc  bool   // the data table has the checksum column
	// V2 is set for the format-2 TTL layout; the fast path never writes a
	// column family whose TTL tables have another.
	V2           bool
	Keys, Expiry string // the TTL key and expiry index tables
	CrcTrigger   string // the checksum trigger (an UPDATE trigger no write here fires)
	// TTLTriggers are the INSERT, UPDATE and DELETE triggers that remove
	// a key's TTL rows when its data row is written or deleted.
	TTLTriggers [3]string
}

// The columns of a column family's read view, as Lookup returns them.
const (
	ViewKey    = iota // the data row's key
	ViewValue         // its value
	ViewCrc           // its checksum (NULL in a table without the column)
	ViewExpiry        // the key index row's expiry (NULL: no TTL)
	ViewEcrc          // the key index row's checksum
	nView
)

// ViewRow is one row of a column family's read view, its columns in the
// order above (Conn.Lookup).
type ViewRow [nView]Field

package btree

// A column family's objects are a *layout.Objects: the names of its tables
// and of the triggers on its data table whose effect the fast path
// reproduces. The fast path writes or reads a column family only when the
// file holds exactly these objects in the shapes snkv creates; anything
// else (a trigger a user added, a TTL table without its triggers, a
// version-1 TTL layout) sends the caller to its SQL statements.

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

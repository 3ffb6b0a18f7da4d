package btree

import "github.com/snkv-go/snkv/internal/layout"

// Table is layout.Objects: the names of one column family's tables and of
// the triggers on its data table whose effect the fast path reproduces. The
// fast path writes or reads a column family only when the file holds
// exactly these objects in the shapes snkv creates; anything else (a
// trigger a user added, a TTL table without its triggers, a version-1 TTL
// layout) sends the caller to its SQL statements.
type Table = layout.Objects

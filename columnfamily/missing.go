package columnfamily

import (
	"context"
	"errors"

	"github.com/snkv-go/snkv/internal/engine"
)

// dropped tells a column family dropped under a statement from damage.
// SQLite reports both as "no such table": the table (or the view, or a TTL
// table) a statement names is not in the schema. That is ErrNotFound only
// when the column family itself is gone from the catalog (dropped by
// another handle or process, or dropped and created again since the handle
// was opened); otherwise an object of a column family that is still
// catalogued is missing, which engine.Wrap reports as ErrCorrupt naming
// the object and pointing to Repair. It returns the ErrNotFound of a
// dropped column family, or nil.
func (cf *ColumnFamily) dropped(err error) error {
	if cf == nil || cf.m == nil || !engine.NoSuchTable(err) {
		return nil
	}
	if cf.m.Dropped.Load() {
		return cf.alive()
	}
	var cur error
	if cf.tx != nil {
		// The transaction's own view: a drop it made is visible to it.
		cur = cf.current(cf.tx.Ctx(), cf.tx.Conn())
	} else {
		// A fresh read transaction: the newest committed catalog.
		cur = cf.db().WithReader(context.Background(), func(c *engine.Conn) error {
			return cf.current(context.Background(), c)
		})
	}
	if errors.Is(cur, engine.ErrNotFound) && cf.m.Dropped.Load() {
		return cur
	}
	return nil
}

package catalog

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/family"
	"github.com/snkv-go/snkv/internal/layout"
)

// ValidateHidden checks a hidden table's kind (1 to 32 bytes of [a-z0-9_],
// not "kv") and name (1 to 255 bytes of UTF-8 without NUL).
func ValidateHidden(kind, name string) error {
	if kind == "" || len(kind) > 32 || kind == "kv" {
		return fmt.Errorf("%w: hidden table kind %q", engine.ErrInvalidName, kind)
	}
	for _, c := range []byte(kind) {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return fmt.Errorf("%w: hidden table kind %q: only a-z, 0-9 and _", engine.ErrInvalidName, kind)
		}
	}
	return family.CheckNameBytes("hidden table name", name)
}

// CreateHidden creates the hidden table name of kind inside tx (its table
// is layout.HiddenTableName(kind, name)), through the same path that
// creates a column family table (so it has the same shape),
// and registers it in the catalog with that kind. A sealed table's values
// are sealed when the store is encrypted, like a column family's; the
// others are kept in the clear. It fails with ErrExists if the table
// exists.
func (r *Registry) CreateHidden(tx *engine.Tx, kind, name string, sealed bool) (*family.Family, error) {
	if err := ValidateHidden(kind, name); err != nil {
		return nil, err
	}
	if err := tx.Check(true); err != nil {
		return nil, err
	}
	if sealed && !r.v2.Load() {
		return nil, fmt.Errorf("%w: a version-1 file cannot record a sealed hidden table: run Upgrade first", engine.ErrVersion)
	}
	table := layout.HiddenTableName(kind, name)
	ctx, c := tx.Ctx(), tx.Conn()
	stamp, err := createIn(ctx, c, table, expiry.StampMs(r.env.Clock))
	if err != nil {
		return nil, engine.Wrap(ctx, "create hidden table", err)
	}
	if _, err := c.Exec(ctx, `UPDATE `+catalog+` SET kind = ?1 WHERE name = ?2`, kind, table); err != nil {
		return nil, engine.Wrap(ctx, "create hidden table", err)
	}
	crc, v2, err := r.shapeOf(ctx, c, table)
	if err != nil {
		return nil, engine.Wrap(ctx, "create hidden table", err)
	}
	if sealed {
		if err := markSealed(ctx, c, table); err != nil {
			return nil, engine.Wrap(ctx, "create hidden table", err)
		}
	}
	m := family.New(r.env, table, stamp, crc, v2)
	m.Sealed.Store(sealed)
	r.mu.Lock()
	r.metas[family.FoldName(table)] = m
	r.mu.Unlock()
	return m, nil
}

// OpenHidden returns the state of the existing hidden table name of kind,
// or ErrNotFound.
func (r *Registry) OpenHidden(ctx context.Context, kind, name string) (*family.Family, error) {
	if err := ValidateHidden(kind, name); err != nil {
		return nil, err
	}
	table := layout.HiddenTableName(kind, name)
	var m *family.Family
	err := r.env.DB.WithReader(ctx, func(c *engine.Conn) error {
		rows, err := c.Query(ctx, `SELECT name, created_ms FROM `+catalog+` WHERE name = ?1 AND kind = ?2`, table, kind)
		if err != nil {
			return err
		}
		found := rows.Next()
		stored, stamp := string(rows.Bytes(0)), rows.Int(1)
		if err := rows.Close(); err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("%w: hidden table %q", engine.ErrNotFound, table)
		}
		m, err = r.familyFor(ctx, c, stored, stamp)
		return err
	})
	if err != nil {
		return nil, engine.Wrap(ctx, "open hidden table", err)
	}
	return m, nil
}

// DropHidden drops the hidden table name of kind inside tx; handles to it
// fail with ErrNotFound once tx commits. A missing table is ErrNotFound.
func (r *Registry) DropHidden(tx *engine.Tx, kind, name string) error {
	if err := ValidateHidden(kind, name); err != nil {
		return err
	}
	if err := tx.Check(true); err != nil {
		return err
	}
	table := layout.HiddenTableName(kind, name)
	ctx, c := tx.Ctx(), tx.Conn()
	n, err := c.QueryInt(ctx, `SELECT count(*) FROM `+catalog+` WHERE name = ?1 AND kind = ?2`, table, kind)
	if err != nil {
		return engine.Wrap(ctx, "drop hidden table", err)
	}
	if n == 0 {
		return fmt.Errorf("%w: hidden table %q", engine.ErrNotFound, table)
	}
	if err := r.dropTables(tx, table); err != nil {
		return engine.Wrap(ctx, "drop hidden table", err)
	}
	return nil
}

// ListHidden returns the names (without the prefix) of the hidden tables of
// kind, sorted bytewise.
func (r *Registry) ListHidden(ctx context.Context, kind string) ([]string, error) {
	if err := ValidateHidden(kind, "x"); err != nil {
		return nil, err
	}
	prefix := layout.HiddenTableName(kind, "")
	var names []string
	err := r.env.DB.WithReader(ctx, func(c *engine.Conn) error {
		rows, err := c.Query(ctx, `SELECT name FROM `+catalog+` WHERE kind = ?1`, kind)
		if err != nil {
			return err
		}
		for rows.Next() {
			if n, ok := strings.CutPrefix(string(rows.Bytes(0)), prefix); ok {
				names = append(names, n)
			}
		}
		return rows.Close()
	})
	if err != nil {
		return nil, engine.Wrap(ctx, "list hidden tables", err)
	}
	slices.Sort(names)
	return names, nil
}

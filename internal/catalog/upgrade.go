package catalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/family"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/internal/rowcodec"
)

// UpgradeBatch is the default number of rows one Upgrade transaction
// converts.
const UpgradeBatch = 2000

// Format reports the file's format version (1 or 2), read from the file.
func (r *Registry) Format(ctx context.Context) (int, error) {
	var v int
	err := r.env.DB.WithReader(ctx, func(c *engine.Conn) error {
		var err error
		v, err = fileFormat(ctx, c, 0)
		return err
	})
	return v, engine.Wrap(ctx, "format", err)
}

// Upgrade converts a version-1 file to format 2 in transactions of at most
// batch rows (batch <= 0: UpgradeBatch), so that other writers wait at
// most one batch. It can be interrupted at any point (cancelled, killed,
// power lost) and run again: it resumes where it stopped. On a format-2
// file it does nothing. See docs/format.md for the steps.
func (r *Registry) Upgrade(ctx context.Context, batch int) error {
	db := r.env.DB
	if db.Config().ReadOnly {
		return fmt.Errorf("snkv: upgrade: %w: the store is open read-only", engine.ErrReadOnly)
	}
	if batch <= 0 {
		batch = UpgradeBatch
	}
	var names []string
	done := false
	err := r.env.Update(ctx, nil, "upgrade", func(ctx context.Context, tx *engine.Tx) error {
		c := tx.Conn()
		ver, err := fileFormat(ctx, c, 0)
		if err != nil || ver >= BaseFormat {
			done = err == nil
			if done {
				tx.OnCommit(func() { r.v2.Store(true) })
			}
			if err == nil {
				err = addCopies(ctx, c)
			}
			return err
		}
		if err := c.ExecScript(ctx, layout.MetaSQL); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, `INSERT OR IGNORE INTO `+metaTable+` (name, value) VALUES ('format', 1)`); err != nil {
			return err
		}
		rows, err := c.Query(ctx, `SELECT name FROM `+catalog+` ORDER BY name`)
		if err != nil {
			return err
		}
		for rows.Next() {
			names = append(names, string(rows.Bytes(0)))
		}
		return rows.Close()
	})
	if err != nil || done {
		return err
	}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return engine.Wrap(ctx, "upgrade", err)
		}
		if err := r.upgradeCF(ctx, name, batch); err != nil {
			return fmt.Errorf("snkv: upgrade: column family %q: %w", name, err)
		}
	}
	return r.env.Update(ctx, nil, "upgrade", func(ctx context.Context, tx *engine.Tx) error {
		c := tx.Conn()
		// A column family created meanwhile by a process that still
		// thought the file was version 1 is converted by the next run.
		left, err := c.QueryInt(ctx, `SELECT count(*) FROM `+catalog+` AS c WHERE EXISTS (SELECT 1 FROM sqlite_schema AS s WHERE s.type = 'table' AND s.name = c.name) AND NOT EXISTS (SELECT 1 FROM pragma_table_list AS l WHERE l.schema = 'main' AND l.name = c.name AND l.strict = 1)`)
		if err != nil {
			return err
		}
		if left > 0 {
			return fmt.Errorf("%d column families were created during the upgrade; run Upgrade again", left)
		}
		uv, err := c.QueryInt(ctx, "PRAGMA user_version")
		if err != nil {
			return err
		}
		if uv == 1 {
			if err := c.ExecScript(ctx, fmt.Sprintf("PRAGMA user_version = %d", BaseFormat)); err != nil {
				return err
			}
		}
		if err := rewriteSchema(ctx, c, layout.CatalogTable, layout.CatalogSQL); err != nil {
			return err
		}
		if _, err = c.Exec(ctx, `INSERT OR REPLACE INTO `+metaTable+` (name, value) VALUES ('format', ?1)`, int64(BaseFormat)); err != nil {
			return err
		}
		if err := addCopies(ctx, c); err != nil {
			return err
		}
		tx.OnCommit(func() { r.v2.Store(true) })
		return nil
	})
}

// checkUpgradable refuses a data table holding rows that format 2 would
// refuse, and reports whether the column family has TTL tables. Both
// upgrade steps that change the table's shape ask it first.
func checkUpgradable(ctx context.Context, c *engine.Conn, t *layout.Objects) (ttlOn bool, err error) {
	n, err := c.QueryInt(ctx, `SELECT count(*) FROM `+t.Quoted.Data+` WHERE typeof(key) <> 'blob' OR typeof(value) <> 'blob' OR length(key) NOT BETWEEN 1 AND 65536`)
	if err != nil {
		return false, err
	}
	if n > 0 {
		return false, foreignRowsError(n)
	}
	return expiry.Enabled(ctx, c, t)
}

// upgradeCF converts one column family: (a) add the checksum column and
// its trigger, (b) fill in the checksums, batch by batch, remembering the
// last key in the meta table, (c) switch the table to its STRICT form and
// rebuild the TTL tables in the format-2 layout.
func (r *Registry) upgradeCF(ctx context.Context, name string, batch int) error {
	// (a)
	skip := false
	err := r.env.Update(ctx, nil, "add checksum column", func(ctx context.Context, tx *engine.Tx) error {
		c := tx.Conn()
		if _, _, err := lookup(ctx, c, name); err != nil {
			skip = errors.Is(err, engine.ErrNotFound) // dropped meanwhile
			return nil
		}
		crc, v2, err := family.ReadShape(ctx, c, name)
		if err != nil || v2 {
			skip = err == nil
			return err
		}
		if crc {
			return nil // done by an earlier, interrupted run
		}
		sh := family.NewShape(name, true, false)
		on, err := checkUpgradable(ctx, c, &sh.Objects)
		if err != nil {
			return err
		}
		q := []string{`ALTER TABLE ` + sh.Objects.Quoted.Data + ` ADD COLUMN crc INTEGER`, sh.Objects.ChecksumTriggerSQL(), `DROP VIEW IF EXISTS ` + sh.Objects.Quoted.View}
		if on {
			q = append(q, `DROP TRIGGER IF EXISTS `+sh.Objects.Quoted.TTLTriggers[layout.OnUpdate])
			q = append(q, sh.Objects.TriggersSQL()...)
			q = append(q, sh.Objects.TTLViewSQL())
		} else {
			q = append(q, sh.Objects.PlainViewSQL())
		}
		for _, s := range q {
			if err := c.ExecScript(ctx, s); err != nil {
				return err
			}
		}
		if _, err := c.Exec(ctx, `INSERT OR REPLACE INTO `+metaTable+` (name, value) VALUES ('upgrade_after', x'')`); err != nil {
			return err
		}
		r.switchShape(tx, name, sh)
		return nil
	})
	if err != nil || skip {
		return err
	}
	// (b)
	for {
		n := 0
		err := r.env.Update(ctx, nil, "fill checksums", func(ctx context.Context, tx *engine.Tx) error {
			var err error
			n, err = fillBatch(ctx, tx.Conn(), name, batch)
			return err
		})
		if err != nil {
			return err
		}
		if n < batch {
			break
		}
	}
	// (c)
	return r.env.Update(ctx, nil, "switch to format 2", func(ctx context.Context, tx *engine.Tx) error {
		c := tx.Conn()
		if _, _, err := lookup(ctx, c, name); err != nil {
			if errors.Is(err, engine.ErrNotFound) {
				return nil
			}
			return err
		}
		sh := family.NewShape(name, true, true)
		on, err := checkUpgradable(ctx, c, &sh.Objects)
		if err != nil {
			return err
		}
		if on {
			if err := rebuildTTL(ctx, c, &sh.Objects); err != nil {
				return err
			}
		}
		if _, err := c.Exec(ctx, `DELETE FROM `+metaTable+` WHERE name = 'upgrade_after'`); err != nil {
			return err
		}
		// Rows a process still in version-1 mode wrote meanwhile: unverified.
		if _, err := c.Exec(ctx, `UPDATE `+sh.Objects.Quoted.Data+` SET crc = ?1 WHERE crc IS NULL`, layout.NoChecksum); err != nil {
			return err
		}
		if err := rewriteSchema(ctx, c, name, sh.Objects.DataTableSQL()); err != nil {
			return err
		}
		r.switchShape(tx, name, sh)
		return nil
	})
}

func foreignRowsError(n int64) error {
	return fmt.Errorf("%w: %d rows have a key or value that is not a BLOB, or a key of 0 or more than %d bytes (written by another tool); fix or delete them with SQL (see docs/format.md), then run Upgrade again", engine.ErrCorrupt, n, layout.MaxKeySize)
}

// fillBatch sets the checksum of up to batch rows after the key remembered
// in the meta table and moves that key on. It returns how many rows it read.
func fillBatch(ctx context.Context, c *engine.Conn, name string, batch int) (int, error) {
	sh := family.NewShape(name, true, false)
	rows, err := c.Query(ctx, `SELECT value FROM `+metaTable+` WHERE name = 'upgrade_after'`)
	if err != nil {
		return 0, err
	}
	after := []byte{}
	if rows.Next() {
		after = rows.Bytes(0)
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	type kv struct {
		key, value []byte
		ttl        bool
	}
	var todo []kv
	var last []byte
	n := 0
	on, err := expiry.Enabled(ctx, c, &sh.Objects)
	if err != nil {
		return 0, err
	}
	q := `SELECT d.key, d.value, d.crc IS NULL, 0 FROM ` + sh.Objects.Quoted.Data + ` AS d WHERE d.key > ?1 ORDER BY d.key LIMIT ?2`
	if on {
		q = `SELECT d.key, d.value, d.crc IS NULL, k.key IS NOT NULL FROM ` + sh.Objects.Quoted.Data + ` AS d LEFT JOIN ` + sh.Objects.Quoted.Keys + ` AS k ON k.key = d.key WHERE d.key > ?1 ORDER BY d.key LIMIT ?2`
	}
	rows, err = c.Query(ctx, q, after, int64(batch))
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		n++
		if rows.Kind(0) != engine.KindBlob || rows.Kind(1) != engine.KindBlob {
			_ = rows.Close()
			return 0, foreignRowsError(1)
		}
		last = rows.Bytes(0)
		if rows.Int(2) == 1 {
			todo = append(todo, kv{last, rows.Bytes(1), rows.Int(3) != 0})
		}
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	for _, r := range todo {
		if _, err := c.Exec(ctx, sh.SQL.SetCrc, r.key, rowcodec.DataSum(r.key, r.value, r.ttl)); err != nil {
			return 0, err
		}
	}
	if n > 0 {
		if _, err := c.Exec(ctx, `UPDATE `+metaTable+` SET value = ?1 WHERE name = 'upgrade_after'`, last); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// rebuildTTL replaces a column family's version-1 TTL tables with the
// format-2 ones, inside the caller's transaction: one pass over the key
// index.
func rebuildTTL(ctx context.Context, c *engine.Conn, t *layout.Objects) error {
	nk := layout.For("__snkv_up__"+t.Data, true, true) // its TTL tables only
	for _, s := range []string{
		`DROP TABLE IF EXISTS ` + nk.Quoted.Keys, `DROP TABLE IF EXISTS ` + nk.Quoted.Expiry,
		nk.KeysTableSQL(), nk.ExpiryTableSQL(),
	} {
		if err := c.ExecScript(ctx, s); err != nil {
			return err
		}
	}
	type row struct{ key, exp []byte }
	var all []row
	rows, err := c.Query(ctx, `SELECT key, expire_ms FROM `+t.Quoted.Keys)
	if err != nil {
		return err
	}
	for rows.Next() {
		if rows.Kind(0) != engine.KindBlob || rows.Kind(1) != engine.KindBlob || len(rows.RawBytes(1)) != 8 {
			_ = rows.Close()
			return fmt.Errorf("%w: a TTL key index row is damaged; run IntegrityCheck", engine.ErrCorrupt)
		}
		all = append(all, row{rows.Bytes(0), rows.Bytes(1)})
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, r := range all {
		if _, err := c.Exec(ctx, nk.SetKeySQL(), r.key, r.exp, rowcodec.RowSum(r.key, r.exp)); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, nk.SetIndexSQL(), r.exp, r.key); err != nil {
			return err
		}
	}
	q := []string{
		`DROP VIEW IF EXISTS ` + t.Quoted.View,
		`DROP TRIGGER IF EXISTS ` + t.Quoted.TTLTriggers[layout.OnUpdate], `DROP TRIGGER IF EXISTS ` + t.Quoted.TTLTriggers[layout.OnDelete],
		`DROP TABLE ` + t.Quoted.Keys, `DROP TABLE ` + t.Quoted.Expiry,
		`ALTER TABLE ` + nk.Quoted.Keys + ` RENAME TO ` + t.Quoted.Keys,
		`ALTER TABLE ` + nk.Quoted.Expiry + ` RENAME TO ` + t.Quoted.Expiry,
	}
	q = append(q, t.TriggersSQL()...)
	q = append(q, t.TTLViewSQL())
	for _, s := range q {
		if err := c.ExecScript(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// rewriteSchema replaces the CREATE statement of table name with sql, which
// must describe the same columns with the same storage (here: the STRICT
// form with CHECK constraints of a table whose rows all fit them). This is
// SQLite's documented way to add constraints without copying a table; the
// schema cookie is bumped so that every connection reloads the schema.
func rewriteSchema(ctx context.Context, c *engine.Conn, name, sql string) error {
	cookie, err := c.QueryInt(ctx, "PRAGMA schema_version")
	if err != nil {
		return err
	}
	if err := c.ExecScript(ctx, "PRAGMA writable_schema = ON"); err != nil {
		return err
	}
	_, err = c.Exec(ctx, `UPDATE sqlite_schema SET sql = ?1 WHERE type = 'table' AND name = ?2`, sql, name)
	if err == nil {
		err = c.ExecScript(ctx, fmt.Sprintf("PRAGMA schema_version = %d", cookie+1))
	}
	return errors.Join(err, c.ExecScript(ctx, "PRAGMA writable_schema = OFF"))
}

// switchShape gives the registered state of column family name the layout
// sh: writes at once (tx holds the writer, so no other write runs before
// it commits), reads once tx has committed; a rollback restores the old one.
func (r *Registry) switchShape(tx *engine.Tx, name string, sh *family.Shape) {
	r.mu.Lock()
	m := r.metas[family.FoldName(name)]
	r.mu.Unlock()
	if m != nil {
		m.SwitchShape(tx, sh)
	}
}

// addCopies gives every catalogued table of a format-2 file that has TTL
// tables but not the expiry copy its copy column and triggers
// (expiry.EnableCopy, which makes the file format 3), inside the caller's
// write transaction. The column is added empty (ALTER TABLE: no row is
// rewritten): each key gets its copy at its next TTL write, and until then
// reads use the key index.
func addCopies(ctx context.Context, c *engine.Conn) error {
	rows, err := c.Query(ctx, `SELECT name FROM `+catalog+` ORDER BY name`)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		names = append(names, string(rows.Bytes(0)))
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, name := range names {
		crc, v2, err := family.ReadShape(ctx, c, name)
		if err != nil {
			return err
		}
		if !crc || !v2 {
			continue
		}
		t := layout.For(name, true, true)
		on, err := expiry.Enabled(ctx, c, &t)
		if err != nil {
			return err
		}
		if !on {
			continue
		}
		has, err := expiry.HasCopy(ctx, c, &t)
		if err != nil {
			return err
		}
		if !has {
			if err := expiry.EnableCopy(ctx, c, &t); err != nil {
				return fmt.Errorf("column family %q: %w", name, err)
			}
		}
	}
	return nil
}

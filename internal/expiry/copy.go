package expiry

import (
	"context"
	"fmt"
	"strings"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/layout"
)

// The expiry copy of a column family (see layout.CopyColumn): made beside
// its TTL tables, and checked by the integrity check.

// EnableCopy gives the format-2 column family t, whose TTL tables exist or
// are being made in the same write transaction on c, its expiry copy
// column and the triggers that keep it true, and makes the file format
// layout.CopyFormat (the PRAGMA user_version too, on a file whose
// user_version snkv keeps: 2), so that a library that cannot keep the copy
// true refuses the file.
func EnableCopy(ctx context.Context, c *engine.Conn, t *layout.Objects) error {
	for _, q := range t.EnableCopySQL() {
		if err := c.ExecScript(ctx, q); err != nil {
			return err
		}
	}
	if _, err := c.Exec(ctx, layout.CopyFormatSQL); err != nil {
		return err
	}
	uv, err := c.QueryInt(ctx, "PRAGMA user_version")
	if err != nil {
		return err
	}
	if uv == 2 {
		return c.ExecScript(ctx, fmt.Sprintf("PRAGMA user_version = %d", layout.CopyFormat))
	}
	return nil
}

// ExpectCopy adjusts want, the CREATE statements a column family's hidden
// objects must have as the integrity check expects them (by name, in the
// form sqlite_schema keeps), for the expiry copy: when the data table as
// stored (storedData) has the copy column and the column family has TTL
// tables, its table must have the form AddCopySQL leaves and the copy's
// triggers must exist. A copy column without TTL tables is left for the
// check to report as a definition that is not snkv's.
func ExpectCopy(want map[string]string, t *layout.Objects, storedData string, withTTL bool) {
	if !withTTL || !t.V2 || !t.Crc || storedData != t.DataTableCopySQL() {
		return
	}
	want[t.Data] = storedData
	for i, q := range t.CopyTriggersSQL() {
		want[t.CopyTriggers[i]] = strings.Replace(q, " IF NOT EXISTS", "", 1)
	}
}

// HasCopy reports whether the data table of t has the expiry copy column.
func HasCopy(ctx context.Context, c *engine.Conn, t *layout.Objects) (bool, error) {
	n, err := c.QueryInt(ctx, `SELECT count(*) FROM pragma_table_info(?1) WHERE name = '`+layout.CopyColumn+`'`, t.Data)
	return n > 0, err
}

// copyMismatchSQL counts the data rows of t whose expiry copy is not their
// key index row's expiry and checksum (a copy without a key index row
// included).
func copyMismatchSQL(t *layout.Objects) string {
	c := layout.CopyColumn
	return `SELECT count(*) FROM ` + t.Quoted.Data + ` AS d WHERE d.` + c + ` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ` + t.Quoted.Keys +
		` AS k WHERE k.key = d.key AND length(d.` + c + `) = 12 AND substr(d.` + c + `, 1, 8) = k.expire_ms AND substr(d.` + c + `, 9) = unhex(printf('%08x', k.crc & 4294967295)))`
}

// RepairCopy makes the expiry copy of the format-2 column family t true
// again when one of its triggers is missing or not snkv's (storedSQL
// returns an object's CREATE statement as sqlite_schema keeps it, "" for a
// missing one): a copy may then have missed a write to its key index row,
// so every copy is cleared (reads use the key index until the next write
// of each key) and the triggers are made again. It reports whether it
// changed anything; a table without the copy column is left as it is.
func RepairCopy(ctx context.Context, c *engine.Conn, t *layout.Objects, storedSQL func(name string) string) (bool, error) {
	if !t.V2 || !t.Crc {
		return false, nil
	}
	withCopy, err := HasCopy(ctx, c, t)
	if err != nil || !withCopy {
		return false, err
	}
	all := true
	for i, q := range t.CopyTriggersSQL() {
		all = all && storedSQL(t.CopyTriggers[i]) == strings.Replace(q, " IF NOT EXISTS", "", 1)
	}
	if all {
		return false, nil
	}
	q := []string{`UPDATE ` + t.Quoted.Data + ` SET ` + layout.CopyColumn + ` = NULL WHERE ` + layout.CopyColumn + ` IS NOT NULL`}
	for i, s := range t.CopyTriggersSQL() {
		q = append(q, `DROP TRIGGER IF EXISTS `+t.Quoted.CopyTriggers[i], s)
	}
	for _, s := range q {
		if err := c.ExecScript(ctx, s); err != nil {
			return false, err
		}
	}
	return true, nil
}

package catalog

import (
	"context"
	"fmt"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/family"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/internal/rowcodec"
)

// Repair restores the hidden objects of every column family from what is
// left: it puts a catalog row back for a column-family or hidden table
// that lost it (under the name and kind the table's name carries),
// recreates a missing table (empty: its rows are gone), read view,
// checksum trigger or TTL trigger, rebuilds a missing TTL table from the
// other one, and removes TTL index rows that no longer agree with the data.
// It never deletes or changes a data row; rows that fail their checksum are
// left for the caller (IntegrityCheck names them). It returns one line per
// repair made.
func (r *Registry) Repair(ctx context.Context) ([]string, error) {
	var done []string
	err := r.env.Update(ctx, nil, "repair", func(ctx context.Context, tx *engine.Tx) error {
		c := tx.Conn()
		o, err := loadSchema(ctx, c)
		if err != nil {
			return err
		}
		names, err := catalogNames(ctx, c)
		if err != nil {
			return err
		}
		ver, err := fileFormat(ctx, c, 0)
		if err != nil {
			return err
		}
		for _, n := range orphans(o, names) {
			kind, what := "kv", fmt.Sprintf("catalog row of %q restored", n)
			if k, name, ok := splitHidden(n); ok {
				kind, what = k, fmt.Sprintf("catalog row of hidden table %q (kind %q) restored", name, k)
			}
			// A fresh creation stamp, as createIn gives one.
			if _, err := c.Exec(ctx, `INSERT INTO `+catalog+` (name, kind, created_ms) SELECT ?1, ?2, max(?3, coalesce(max(created_ms), 0) + 1) FROM `+catalog, n, kind, expiry.StampMs(r.env.Clock)); err != nil {
				return err
			}
			done = append(done, what)
			names = append(names, n)
		}
		for _, name := range names {
			d, err := repairCF(ctx, c, o, name, ver)
			if err != nil {
				return fmt.Errorf("column family %q: %w", name, err)
			}
			done = append(done, d...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return done, nil
}

func repairCF(ctx context.Context, c *engine.Conn, o schemaObjects, name string, ver int) ([]string, error) {
	var done []string
	exec := func(what string, q ...string) error {
		for _, s := range q {
			if err := c.ExecScript(ctx, s); err != nil {
				return err
			}
		}
		if what != "" {
			done = append(done, fmt.Sprintf("column family %q: %s", name, what))
		}
		return nil
	}
	if !o.has("table", name) {
		// Its TTL tables, if any, belonged to the rows that are gone.
		t := layout.For(name, ver >= 2, ver >= 2)
		q := t.V1DataTableSQL()
		if ver >= 2 {
			q = t.DataTableSQL()
		}
		if err := exec("table recreated (empty: its rows were gone)", `DROP TABLE IF EXISTS `+t.Quoted.Keys, `DROP TABLE IF EXISTS `+t.Quoted.Expiry, q); err != nil {
			return nil, err
		}
		o.kinds[family.FoldName(name)] = "table"
		delete(o.kinds, family.FoldName(t.Keys))
		delete(o.kinds, family.FoldName(t.Expiry))
	}
	crc, v2, err := family.ReadShape(ctx, c, name)
	if err != nil {
		return nil, err
	}
	lt := layout.For(name, crc, v2)
	t := &lt
	if crc && o.sql[family.FoldName(t.CrcTrigger)] != stored(t.ChecksumTriggerSQL()) {
		if err := exec("checksum trigger recreated", `DROP TRIGGER IF EXISTS `+t.Quoted.CrcTrigger, t.ChecksumTriggerSQL()); err != nil {
			return nil, err
		}
	}
	keys, exp := o.has("table", t.Keys), o.has("table", t.Expiry)
	switch {
	case keys && !exp:
		q := []string{t.ExpiryTableSQL()}
		if v2 {
			q = append(q, `INSERT INTO `+t.Quoted.Expiry+` (expire_ms, key) SELECT expire_ms, key FROM `+t.Quoted.Keys+` WHERE typeof(expire_ms) = 'blob' AND length(expire_ms) = 8`)
		} else {
			q = append(q, `INSERT INTO `+t.Quoted.Expiry+` (key) SELECT CAST(expire_ms || key AS BLOB) FROM `+t.Quoted.Keys)
		}
		if err := exec("TTL expiry index rebuilt from the key index", q...); err != nil {
			return nil, err
		}
	case exp && !keys:
		if err := exec("", t.KeysTableSQL()); err != nil {
			return nil, err
		}
		if err := refillKeys(ctx, c, t); err != nil {
			return nil, err
		}
		done = append(done, fmt.Sprintf("column family %q: TTL key index rebuilt from the expiry index", name))
	}
	if keys || exp {
		want := expectedSQL(t, true)
		var q []string
		for i, n := range []string{t.TTLTriggers[layout.OnUpdate], t.TTLTriggers[layout.OnDelete], t.TTLTriggers[layout.OnInsert]}[:len(t.TriggersSQL())] {
			if o.sql[family.FoldName(n)] != want[n] {
				q = append(q, `DROP TRIGGER IF EXISTS `+layout.Quote(n), t.TriggersSQL()[i])
			}
		}
		if len(q) > 0 {
			if err := exec("TTL triggers recreated", q...); err != nil {
				return nil, err
			}
		}
		if fixed, err := expiry.RepairCopy(ctx, c, t, func(n string) string { return o.sql[family.FoldName(n)] }); err != nil {
			return nil, err
		} else if fixed {
			done = append(done, fmt.Sprintf("column family %q: TTL expiry copies cleared and their triggers recreated", name))
		}
		if v2 {
			// Index rows the data no longer backs (left by the damage).
			n, err := c.Exec(ctx, `DELETE FROM `+t.Quoted.Keys+` WHERE NOT EXISTS (SELECT 1 FROM `+t.Quoted.Data+` AS d WHERE d.key = `+t.Quoted.Keys+`.key)`)
			if err != nil {
				return nil, err
			}
			m, err := c.Exec(ctx, `DELETE FROM `+t.Quoted.Expiry+` WHERE NOT EXISTS (SELECT 1 FROM `+t.Quoted.Keys+` AS k WHERE k.key = `+t.Quoted.Expiry+`.key AND k.expire_ms = `+t.Quoted.Expiry+`.expire_ms)`)
			if err != nil {
				return nil, err
			}
			if n+m > 0 {
				done = append(done, fmt.Sprintf("column family %q: %d TTL index rows without a partner removed", name, n+m))
			}
		}
	}
	want := t.PlainViewSQL()
	if keys || exp {
		want = t.TTLViewSQL()
	}
	cur := o.sql[family.FoldName(t.View)]
	if !o.has("view", t.View) || cur != want {
		if err := exec("read view recreated", `DROP VIEW IF EXISTS `+t.Quoted.View, want); err != nil {
			return nil, err
		}
	}
	return done, nil
}

// refillKeys rebuilds a key index from the expiry index (format 2 gives
// each row its checksum again).
func refillKeys(ctx context.Context, c *engine.Conn, t *layout.Objects) error {
	q := `SELECT expire_ms, key FROM ` + t.Quoted.Expiry
	if !t.V2 {
		q = `SELECT substr(key, 1, 8), substr(key, 9) FROM ` + t.Quoted.Expiry
	}
	rows, err := c.Query(ctx, q)
	if err != nil {
		return err
	}
	type row struct{ exp, key []byte }
	var all []row
	for rows.Next() {
		if rows.Kind(0) == engine.KindBlob && rows.Kind(1) == engine.KindBlob {
			all = append(all, row{rows.Bytes(0), rows.Bytes(1)})
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, r := range all {
		var sum any
		if t.V2 {
			sum = rowcodec.RowSum(r.key, r.exp)
		}
		if _, err := c.Exec(ctx, t.SetKeySQL(), r.key, r.exp, sum); err != nil {
			return err
		}
	}
	return nil
}

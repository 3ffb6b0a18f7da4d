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
	"github.com/snkv-go/snkv/internal/rowcodec"
	"github.com/snkv-go/snkv/internal/seal"
)

// CheckReport is what Registry.Check found.
type CheckReport struct {
	// Problems lists every problem found, one line each; empty for a
	// sound store.
	Problems []string
	// Rows is the number of rows read: data rows and TTL key index rows.
	Rows int64
	// Verified is how many of them matched their checksum.
	Verified int64
	// Unverified is how many carry no checksum: written by another tool
	// (the sqlite3 shell) or in a version-1 table. They are not problems.
	Unverified int64
	// UnverifiedByCF breaks Unverified down by column family.
	UnverifiedByCF map[string]int64
}

// schemaObjects is the set of (type, name) pairs in sqlite_schema, with the
// SQL of views.
type schemaObjects struct {
	kinds map[string]string // folded name -> type
	sql   map[string]string // folded name -> CREATE statement
	names map[string]string // folded name -> the name as stored
}

func loadSchema(ctx context.Context, c *engine.Conn) (schemaObjects, error) {
	o := schemaObjects{kinds: map[string]string{}, sql: map[string]string{}, names: map[string]string{}}
	rows, err := c.Query(ctx, `SELECT type, name, sql FROM sqlite_schema`)
	if err != nil {
		return o, err
	}
	for rows.Next() {
		name := string(rows.RawBytes(1))
		o.kinds[family.FoldName(name)] = string(rows.RawBytes(0))
		o.sql[family.FoldName(name)] = string(rows.RawBytes(2))
		o.names[family.FoldName(name)] = name
	}
	return o, rows.Close()
}

func (o schemaObjects) has(kind, name string) bool { return o.kinds[family.FoldName(name)] == kind }

// catalogNames returns the names in the catalog.
func catalogNames(ctx context.Context, c *engine.Conn) ([]string, error) {
	rows, err := c.Query(ctx, `SELECT name FROM `+catalog)
	if err != nil {
		return nil, err
	}
	var names []string
	for rows.Next() {
		names = append(names, string(rows.Bytes(0)))
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// stored is how SQLite keeps a CREATE statement in sqlite_schema.
func stored(sql string) string { return strings.Replace(sql, " IF NOT EXISTS", "", 1) }

// expectedSQL returns the CREATE statement each hidden object of t must
// have (views and triggers always; tables in the format-2 layout), by name.
func expectedSQL(t *layout.Objects, withTTL bool) map[string]string {
	want := map[string]string{t.View: t.PlainViewSQL()}
	if t.Crc {
		want[t.CrcTrigger] = t.ChecksumTriggerSQL()
	}
	if t.V2 {
		want[t.Data] = t.DataTableSQL()
	}
	if withTTL {
		want[t.View] = t.TTLViewSQL()
		for i, q := range t.TriggersSQL() {
			want[[]string{t.TTLTriggers[layout.OnUpdate], t.TTLTriggers[layout.OnDelete], t.TTLTriggers[layout.OnInsert]}[i]] = q
		}
		if t.V2 {
			want[t.Keys], want[t.Expiry] = t.KeysTableSQL(), t.ExpiryTableSQL()
		}
	}
	for k, v := range want {
		want[k] = stored(v)
	}
	return want
}

// objectProblems lists the hidden objects of column family name that are
// missing or whose definition is not the one snkv wrote (damage, or an
// edit by hand, can silently change what a view reads or a trigger does).
func objectProblems(o schemaObjects, t *layout.Objects) []string {
	var p []string
	add := func(format string, a ...any) {
		p = append(p, fmt.Sprintf("column family %q: ", t.Data)+fmt.Sprintf(format, a...))
	}
	if !o.has("table", t.Data) {
		add("its table is missing")
		return p
	}
	keys, exp := o.has("table", t.Keys), o.has("table", t.Expiry)
	if keys != exp {
		add("only one of its TTL tables exists (key index %v, expiry index %v)", keys, exp)
	}
	want := expectedSQL(t, keys || exp)
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		got, ok := o.sql[family.FoldName(n)]
		switch {
		case !ok:
			add("%q is missing", n)
		case got != want[n]:
			add("the definition of %q is not snkv's", n)
		}
	}
	return p
}

// orphans lists the tables that lost their catalog row, by their stored
// names: tables that are not catalogued but have snkv's hidden objects
// beside them (column families, and hidden tables, whose kind their name
// carries).
func orphans(o schemaObjects, listed []string) []string {
	in := map[string]bool{}
	for _, n := range listed {
		in[family.FoldName(n)] = true
	}
	var out []string
	for folded, kind := range o.kinds {
		name := o.names[folded]
		if kind != "table" || in[folded] || strings.HasPrefix(folded, "sqlite_") {
			continue
		}
		if _, _, hidden := splitHidden(name); isReservedObject(name) && !hidden {
			continue
		}
		if o.has("view", layout.ViewPrefix+name) || o.has("trigger", layout.ChecksumTriggerPrefix+name) || o.has("table", layout.KeysPrefix+name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// splitHidden returns the kind and name of a hidden table's SQLite name
// (see HiddenTableName), if it is one.
func splitHidden(table string) (kind, name string, ok bool) {
	rest, ok := strings.CutPrefix(table, layout.HiddenPrefix)
	if !ok {
		return "", "", false
	}
	kind, name, ok = strings.Cut(rest, ":")
	if !ok || ValidateHidden(kind, name) != nil {
		return "", "", false
	}
	return kind, name, true
}

// Check verifies the store beyond SQLite's own integrity_check: every
// catalogued column family has its table and hidden objects, no column
// family table is missing from the catalog, every row has the right types
// and a key of legal length, every checksum matches, and the TTL tables
// agree. It reads every row once, inside one read snapshot.
func (r *Registry) Check(ctx context.Context) (CheckReport, error) {
	rep := CheckReport{UnverifiedByCF: map[string]int64{}}
	tx, err := r.env.DB.Begin(ctx, false)
	if err != nil {
		return rep, err
	}
	defer tx.Commit()
	c := tx.Conn()
	o, err := loadSchema(ctx, c)
	if err != nil {
		return rep, err
	}
	names, err := catalogNames(ctx, c)
	if err != nil {
		return rep, err
	}
	ss := r.snapshotState(ctx, c)
	for _, n := range orphans(o, names) {
		rep.Problems = append(rep.Problems, fmt.Sprintf("table %q has snkv's hidden objects but no catalog row", n))
	}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		crc, v2, err := family.ReadShape(ctx, c, name)
		if err != nil {
			return rep, err
		}
		t := layout.For(name, crc, v2)
		p := objectProblems(o, &t)
		rep.Problems = append(rep.Problems, p...)
		if !o.has("table", name) {
			continue
		}
		sealed := !layout.IsHidden(name)
		if !sealed {
			if sealed, err = r.hiddenSealed(ctx, c, name); err != nil {
				return rep, err
			}
		}
		if err := checkRows(ctx, c, &t, sealed, ss, &rep); err != nil {
			return rep, err
		}
		if o.has("table", t.Keys) && o.has("table", t.Expiry) {
			p, err := expiry.Check(ctx, c, &t)
			if err != nil {
				return rep, err
			}
			rep.Problems = append(rep.Problems, p...)
		}
	}
	return rep, nil
}

// checkRows reads every row of the data table (and of the key index) of
// t, counting checksums and reporting bad rows. sealed says whether the
// table's values are sealed when the store is encrypted.
//
// In an encrypted store every sealed value is opened as well, and each one
// that fails authentication is reported with its key.
//
// ss is the encryption state of the check's snapshot (see
// Registry.snapshotState).
func checkRows(ctx context.Context, c *engine.Conn, t *layout.Objects, sealed bool, ss *seal.State, rep *CheckReport) error {
	if !sealed {
		ss = nil
	}
	hasTTL, err := expiry.Enabled(ctx, c, t)
	if err != nil {
		return err
	}
	// Every row is read through the codec's read sequence (Codec.Check),
	// as a get or scan reads it: data rows with their expiry (its key index
	// row's checksum is checked by the second pass, which reads the key
	// index rows as an Exists does, with no value).
	scan := func(q string, cols rowcodec.Cols, keys bool) error {
		rows, err := c.Query(ctx, q)
		if err != nil {
			return err
		}
		var bad, foreign, unauth int64
		var badKeys []string // the first maxBadKeys keys of bad rows
		var buf rowcodec.Buffers
		var scrap engine.Counters
		cd := rowcodec.Codec{Objects: t, Seal: ss, Sealed: sealed, Stats: &scrap}
		for rows.Next() {
			rep.Rows++
			r := cd.Check(rows, &cols, rowcodec.Borrow, &buf)
			if keys && r.Err == nil && r.Exp < 0 {
				r.Fault = rowcodec.Foreign // a key index row without its expiry
			}
			switch r.Fault {
			case rowcodec.Foreign:
				foreign++
			case rowcodec.BadSeal:
				unauth++
				if unauth <= maxAuthLines {
					rep.Problems = append(rep.Problems, fmt.Sprintf("column family %q: %v", t.Data, r.Err))
				}
			case rowcodec.BadSum:
				bad++
				if len(badKeys) < maxBadKeys {
					badKeys = append(badKeys, rowcodec.ShowKey(r.Key))
				}
			default:
				if r.Verdict == rowcodec.Verified {
					rep.Verified++
				} else {
					rep.Unverified++
					rep.UnverifiedByCF[t.Data]++
				}
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		where := "rows"
		if keys {
			where = "TTL key index rows"
		}
		if bad == 1 {
			where = strings.TrimSuffix(where, "s")
		}
		if foreign > 0 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("column family %q: %d %s have a key or value of the wrong type or length (written by another tool)", t.Data, foreign, where))
		}
		if bad > 0 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("column family %q: %s", t.Data, badRows(bad, where, badKeys)))
		}
		if unauth > maxAuthLines {
			rep.Problems = append(rep.Problems, fmt.Sprintf("column family %q: %d more rows fail authentication", t.Data, unauth-maxAuthLines))
		}
		return nil
	}
	crc := "NULL"
	if t.Crc {
		crc = "d.crc"
	}
	// Columns: key, value, checksum (or NULL), expiry (or NULL).
	data := rowcodec.Cols{Key: 0, Value: 1, Crc: 2, Expiry: 3, Ecrc: -1}
	q := `SELECT d.key, d.value, ` + crc + `, NULL FROM ` + t.Quoted.Data + ` AS d`
	if hasTTL {
		q = `SELECT d.key, d.value, ` + crc + `, k.expire_ms FROM ` + t.Quoted.Data + ` AS d LEFT JOIN ` + t.Quoted.Keys + ` AS k ON k.key = d.key`
	}
	if err := scan(q, data, false); err != nil || !hasTTL {
		return err
	}
	crc = "NULL"
	if t.V2 {
		crc = "crc"
	}
	// Columns: key, expiry, checksum (or NULL: unverified).
	return scan(`SELECT key, expire_ms, `+crc+` FROM `+t.Quoted.Keys, rowcodec.Cols{Key: 0, Value: -1, Crc: -1, Expiry: 1, Ecrc: 2}, true)
}

// maxAuthLines bounds the keys a check names, per table, that fail
// authentication.
const maxAuthLines = 100

// maxBadKeys bounds the keys a check names for one column family's rows
// that fail their checksum.
const maxBadKeys = 10

// badRows says that n rows (where: "rows", "TTL key index rows", singular
// for one) fail their checksum, naming keys (at most maxBadKeys of them)
// and counting the rest.
func badRows(n int64, where string, keys []string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s fails its checksum: key %s", where, keys[0])
	}
	msg := fmt.Sprintf("%d %s fail their checksum: keys %s", n, where, strings.Join(keys, ", "))
	if rest := n - int64(len(keys)); rest > 0 {
		msg += fmt.Sprintf(", and %d more", rest)
	}
	return msg
}

package layout_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/internal/testutil"
)

// goldenLayouts are the layouts a column family's objects can have.
var goldenLayouts = []struct {
	name    string
	crc, v2 bool
}{
	{"format1", false, false},  // a version-1 file
	{"upgrading", true, false}, // a version-1 table part way through Upgrade
	{"format2", true, true},    // format 2
}

// statement is one generated statement of a layout, with what names it.
type statement struct{ name, sql string }

// generated is every statement this package generates for the objects of
// column family "users" in one layout.
func generated(o layout.Objects) []statement {
	var out []statement
	add := func(name, sql string) { out = append(out, statement{name, sql}) }
	if o.V2 {
		add("CatalogSQL", layout.CatalogSQL)
		add("MetaSQL", layout.MetaSQL)
		add("DataTableSQL", o.DataTableSQL())
	} else {
		add("V1DataTableSQL", o.V1DataTableSQL())
	}
	if o.Crc {
		add("ChecksumTriggerSQL", o.ChecksumTriggerSQL())
	}
	add("PlainViewSQL", o.PlainViewSQL())
	for i, q := range o.EnableSQL() {
		add(fmt.Sprintf("EnableSQL[%d]", i), q)
	}
	if o.V2 {
		add("DataTableCopySQL", o.DataTableCopySQL())
		for i, q := range o.EnableCopySQL() {
			add(fmt.Sprintf("EnableCopySQL[%d]", i), q)
		}
		add("CopyFormatSQL", layout.CopyFormatSQL)
	}
	for i, q := range o.DropSQL() {
		add(fmt.Sprintf("DropSQL[%d]", i), q)
	}
	q := o.Queries()
	for _, s := range []statement{
		{"Get", q.Get}, {"Exists", q.Exists}, {"Count", q.Count}, {"Put", q.Put}, {"Upsert", q.Upsert},
		{"Insert", q.Insert}, {"Current", q.Current}, {"Del", q.Del}, {"DelLive", q.DelLive}, {"LazyDel", q.LazyDel},
		{"SetKey", q.SetKey}, {"SetIndex", q.SetIndex}, {"DelKey", q.DelKey}, {"DelIndex", q.DelIndex},
		{"SetCrc", q.SetCrc}, {"FlipTTL", q.FlipTTL}, {"Holder", q.Holder},
	} {
		add("Queries."+s.name, s.sql)
	}
	kinds := []layout.BoundKind{layout.Open, layout.Inclusive, layout.Exclusive}
	names := []string{"Open", "Inclusive", "Exclusive"}
	for i, lo := range kinds {
		for j, hi := range kinds {
			for _, desc := range []bool{false, true} {
				add(fmt.Sprintf("Queries.Scan(%s, %s, desc=%v)", names[i], names[j], desc), q.Scan(lo, hi, desc))
			}
		}
	}
	return out
}

// goldenSQL is the golden file's text: every statement of every layout,
// each text once, under a comment naming it and the layouts that generate
// it ("-- Queries.Get: upgrading, format2"), in the order the layouts
// generate them.
func goldenSQL() string {
	var order []string
	byName := map[string][]statement{} // a statement's texts, each with its layouts
	for _, l := range goldenLayouts {
		for _, s := range generated(layout.For("users", l.crc, l.v2)) {
			texts, seen := byName[s.name]
			if !seen {
				order = append(order, s.name)
			}
			i := slices.IndexFunc(texts, func(t statement) bool { return t.sql == s.sql })
			if i < 0 {
				texts = append(texts, statement{l.name, s.sql})
			} else {
				texts[i].name += ", " + l.name
			}
			byName[s.name] = texts
		}
	}
	var b strings.Builder
	for _, name := range order {
		for _, t := range byName[name] {
			fmt.Fprintf(&b, "-- %s: %s\n%s;\n\n", name, t.name, t.sql)
		}
	}
	return b.String()
}

// The DDL and the statements of each layout, byte for byte: a change to
// any of them changes what snkv writes into files, or reads from files
// older versions wrote, and shows up here (and needs docs/format.md and,
// for the DDL, Repair and IntegrityCheck to agree). A statement that two
// layouts share is written once, so the file shows where they differ.
func TestGoldenSQL(t *testing.T) {
	testutil.GoldenFile(t, filepath.Join("testdata", "layouts.sql"), goldenSQL(),
		"the generated SQL changed: if that is meant, go test -run Golden -update ./internal/layout/")
}

package layout_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/snkv-go/snkv/internal/layout"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// goldenLayouts are the layouts a column family's objects can have.
var goldenLayouts = []struct {
	file    string
	crc, v2 bool
}{
	{"format1.sql", false, false},  // a version-1 file
	{"upgrading.sql", true, false}, // a version-1 table part way through Upgrade
	{"format2.sql", true, true},    // format 2
}

// generated is every statement this package generates for the objects of
// column family "users" in one layout, each under a comment naming it.
func generated(o layout.Objects) string {
	var b strings.Builder
	add := func(name, sql string) { fmt.Fprintf(&b, "-- %s\n%s;\n\n", name, sql) }
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
	for i, q := range o.DropSQL() {
		add(fmt.Sprintf("DropSQL[%d]", i), q)
	}
	q := o.Queries()
	for _, s := range []struct{ name, sql string }{
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
	return b.String()
}

// The DDL and the statements of each layout, byte for byte: a change to
// any of them changes what snkv writes into files, or reads from files
// older versions wrote, and shows up here (and needs docs/format.md and,
// for the DDL, Repair and IntegrityCheck to agree).
func TestGoldenSQL(t *testing.T) {
	for _, l := range goldenLayouts {
		t.Run(l.file, func(t *testing.T) {
			got := generated(layout.For("users", l.crc, l.v2))
			path := filepath.Join("testdata", l.file)
			if *update {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "go test -run Golden -update writes it")
			require.Equal(t, string(want), got, "the generated SQL changed: go test -run Golden -update rewrites %s", path)
		})
	}
}

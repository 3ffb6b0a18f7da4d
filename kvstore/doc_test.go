package kvstore_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// packageDoc returns the documentation of package kvstore, as go doc reads
// it from the package's source files.
func packageDoc(t *testing.T) *doc.Package {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		require.NoError(t, err)
		files = append(files, f)
	}
	require.NotEmpty(t, files)
	p, err := doc.NewFromFiles(fset, files, "github.com/snkv-go/snkv/kvstore")
	require.NoError(t, err)
	return p
}

// docOf returns the doc comment of the type name, or of its method method
// when that is not empty, flattened to one line.
func docOf(t *testing.T, p *doc.Package, name, method string) string {
	t.Helper()
	for _, ty := range p.Types {
		if ty.Name != name {
			continue
		}
		if method == "" {
			return strings.Join(strings.Fields(ty.Doc), " ")
		}
		for _, m := range ty.Methods {
			if m.Name == method {
				return strings.Join(strings.Fields(m.Doc), " ")
			}
		}
	}
	for _, c := range p.Consts {
		if method == "" && slicesContains(c.Names, name) {
			return strings.Join(strings.Fields(c.Doc), " ")
		}
	}
	t.Fatalf("no documentation for %s %s", name, method)
	return ""
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// go doc of kvstore is enough to use it: ColumnFamily's own comment names
// every method a user calls on it (it is an alias, so go doc shows no
// method list); the Store methods that act on the default column family
// only say so; where a cursor is made says when it takes its snapshot; and
// NoTTL says how it prints. Before, ColumnFamily's comment only said "see
// the columnfamily package", and none of the rest was written down.
func TestGoDocIsEnough(t *testing.T) {
	p := packageDoc(t)

	cfDoc := docOf(t, p, "ColumnFamily", "")
	typ := reflect.TypeOf((*kvstore.ColumnFamily)(nil))
	for i := range typ.NumMethod() {
		name := typ.Method(i).Name
		if name == "String" || name == "Registry" {
			continue // fmt's, and the extension point for layers above
		}
		require.Contains(t, cfDoc, name, "go doc kvstore.ColumnFamily does not name %s", name)
	}

	for _, m := range []string{"PurgeExpired", "PurgeExpiredN", "Count", "Clear", "CheckTTL"} {
		require.Contains(t, docOf(t, p, "Store", m), "default column family only", "Store.%s", m)
	}
	require.Contains(t, docOf(t, p, "Store", "PurgeExpired"), "PurgeInterval")
	require.Contains(t, docOf(t, p, "Store", "PurgeExpired"), "PurgeExpiredAll")

	for _, where := range [][2]string{{"Cursor", ""}, {"Store", "Cursor"}} {
		require.Contains(t, docOf(t, p, where[0], where[1]), "first positioned", "%s %s", where[0], where[1])
	}

	noTTL := docOf(t, p, "NoTTL", "")
	require.Contains(t, noTTL, `"-1ns"`)
	require.Contains(t, noTTL, "if left == kvstore.NoTTL")
}

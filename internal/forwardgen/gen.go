package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
)

// method is one exported method of *columnfamily.ColumnFamily, as the
// forwarding methods repeat it.
type method struct {
	name    string
	params  []param
	results []string // types, in kvstore's names
	// variadic: the last parameter is ...T.
	variadic bool
}

// param is one field of a parameter list: names sharing a type, as the
// source groups them.
type param struct {
	names []string
	typ   string
}

// owner is a kvstore type that forwards the method set.
type owner struct {
	file   string // the generated file, in the kvstore directory
	recv   string // receiver name
	typ    string // receiver type
	nilErr string // the error of a call on a nil receiver
	docOn  string // how the doc comment names the handle
	intro  string // the comment that opens the file
	notes  map[string]string
}

var owners = []owner{
	{
		file: "forward_store.go", recv: "s", typ: "Store", nilErr: "errNilStore",
		docOn: "the default column family",
		intro: `// The default column family's methods on *Store, generated from the method
// set of *columnfamily.ColumnFamily rather than promoted from an embedded
// *ColumnFamily, so that a call on a nil *Store returns ErrInvalidArgument
// instead of panicking on the nil pointer. Each behaves exactly as the
// ColumnFamily method of the same name (see the columnfamily package) on
// the handle Default returns.`,
		notes: storeNotes,
	},
	{
		file: "forward_tx.go", recv: "tx", typ: "Tx", nilErr: "errNilTx",
		docOn: "the transaction's default column family",
		intro: `// The default column family's methods on *Tx, bound to the transaction,
// generated from the method set of *columnfamily.ColumnFamily rather than
// promoted from an embedded *ColumnFamily, so that a call on a nil *Tx
// returns ErrInvalidArgument instead of panicking on the nil pointer. Each
// behaves exactly as the ColumnFamily method of the same name on the
// handle Default returns.`,
		notes: txNotes,
	},
}

// storeNotes and txNotes are added to a forwarding method's doc comment,
// where the default column family's method means something a reader of
// Store or Tx could take for the whole store. A note that starts with a
// capital letter is sentences of its own; any other continues the first
// sentence ("only: ...", ": it reads ...").
var (
	storeNotes = map[string]string{
		"CheckTTL": `only; other column families are not checked. CheckIntegrity checks
			the TTL state of every column family (with the rest of the store).`,
		"Clear": `only: it removes the default column family's keys and leaves every
			other column family as it is (DropColumnFamily removes one of those whole).`,
		"Count": `only: the live keys of the default column family, not of the store.
			Count each column family through its handle, or use CountKeys for one by
			name (live, TTL and expired-not-yet-purged keys).`,
		"Cursor": `The cursor takes its snapshot when it is first positioned (First,
			Last or Seek), not when Cursor returns, and keeps that snapshot until Close:
			writes committed between Cursor and the first positioning are seen, later
			ones are not, even after it is positioned again.`,
		"PurgeExpired": `only; the expired keys of other column families stay until
			their own purge. PurgeExpiredAll purges every column family, and the store
			runs it by itself every Options.PurgeInterval (one minute by default on the
			system clock; off with an injected Clock or PurgeInterval -1).`,
		"PurgeExpiredN": `only (see PurgeExpired).`,
	}
	txNotes = map[string]string{
		"Cursor": `: it reads inside the transaction, from its snapshot (and, in a
			write transaction, its own writes; see ColumnFamily.Cursor).`,
		"DeleteRangeInBatches": "In the transaction it deletes in one go.",
	}
)

// kvstoreNames maps the names the columnfamily source uses for types to
// kvstore's: its own types (aliases in kvstore) and iterator's (aliased
// under other names).
var kvstoreNames = map[string]string{
	"ColumnFamily":     "ColumnFamily",
	"Batch":            "Batch",
	"iterator.Options": "IterOptions",
	"iterator.Entry":   "Entry",
	"iterator.Cursor":  "Cursor",
}

// importable are the packages a forwarded signature may name (kvstore
// imports them in the generated files as needed).
var importable = []string{"context", "iter", "time"}

// readMethods parses the non-test Go files of the columnfamily directory
// dir and returns the exported methods of *ColumnFamily, sorted by name.
func readMethods(dir string) ([]method, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var out []method
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || !fd.Name.IsExported() || !isColumnFamily(fd.Recv.List[0].Type) {
				continue
			}
			m, err := toMethod(fset, fd)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", fset.Position(fd.Pos()), err)
			}
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b method) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

func isColumnFamily(e ast.Expr) bool {
	st, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := st.X.(*ast.Ident)
	return ok && id.Name == "ColumnFamily"
}

func toMethod(fset *token.FileSet, fd *ast.FuncDecl) (method, error) {
	m := method{name: fd.Name.Name}
	for _, f := range fd.Type.Params.List {
		t := f.Type
		if el, ok := t.(*ast.Ellipsis); ok {
			m.variadic = true
			t = el.Elt
		}
		typ, err := typeName(fset, t)
		if err != nil {
			return m, err
		}
		if m.variadic {
			typ = "..." + typ
		}
		if len(f.Names) == 0 {
			return m, fmt.Errorf("method %s: unnamed parameter", m.name)
		}
		p := param{typ: typ}
		for _, n := range f.Names {
			if n.Name == "s" || n.Name == "tx" {
				return m, fmt.Errorf("method %s: parameter %q is a receiver name of the forwarding methods", m.name, n.Name)
			}
			p.names = append(p.names, n.Name)
		}
		m.params = append(m.params, p)
	}
	if fd.Type.Results != nil {
		for _, f := range fd.Type.Results.List {
			typ, err := typeName(fset, f.Type)
			if err != nil {
				return m, err
			}
			for range max(1, len(f.Names)) {
				m.results = append(m.results, typ)
			}
		}
	}
	return m, nil
}

// typeName prints a type of the columnfamily source in kvstore's names.
func typeName(fset *token.FileSet, e ast.Expr) (string, error) {
	var bad error
	e = rewrite(e, &bad)
	if bad != nil {
		return "", bad
	}
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, e); err != nil {
		return "", err
	}
	return b.String(), nil
}

// rewrite returns e with columnfamily's and iterator's type names replaced
// by kvstore's; a name kvstore does not have sets *bad.
func rewrite(e ast.Expr, bad *error) ast.Expr {
	switch t := e.(type) {
	case *ast.Ident:
		if !t.IsExported() {
			return t // a predeclared type
		}
		if n, ok := kvstoreNames[t.Name]; ok {
			return ast.NewIdent(n)
		}
		*bad = fmt.Errorf("type %s has no name in kvstore (add an alias and list it in kvstoreNames)", t.Name)
	case *ast.SelectorExpr:
		pkg := t.X.(*ast.Ident).Name
		if n, ok := kvstoreNames[pkg+"."+t.Sel.Name]; ok {
			return ast.NewIdent(n)
		}
		if !slices.Contains(importable, pkg) {
			*bad = fmt.Errorf("type %s.%s: package %s is not one the forwarding files import", pkg, t.Sel.Name, pkg)
		}
	case *ast.StarExpr:
		return &ast.StarExpr{X: rewrite(t.X, bad)}
	case *ast.ArrayType:
		return &ast.ArrayType{Len: t.Len, Elt: rewrite(t.Elt, bad)}
	case *ast.MapType:
		return &ast.MapType{Key: rewrite(t.Key, bad), Value: rewrite(t.Value, bad)}
	case *ast.IndexListExpr:
		idx := make([]ast.Expr, len(t.Indices))
		for i, x := range t.Indices {
			idx[i] = rewrite(x, bad)
		}
		return &ast.IndexListExpr{X: rewrite(t.X, bad), Indices: idx}
	case *ast.IndexExpr:
		return &ast.IndexExpr{X: rewrite(t.X, bad), Index: rewrite(t.Index, bad)}
	case *ast.FuncType, *ast.InterfaceType, *ast.ChanType:
		*bad = fmt.Errorf("a %T in a ColumnFamily signature: teach the generator its zero value", t)
	}
	return e
}

// zero returns the zero value of a result type for a return statement.
func zero(typ string) (string, error) {
	switch {
	case typ == "bool":
		return "false", nil
	case typ == "string":
		return `""`, nil
	case typ == "int" || typ == "int64" || typ == "uint64" || typ == "time.Duration":
		return "0", nil
	case strings.HasPrefix(typ, "*") || strings.HasPrefix(typ, "[]") || strings.HasPrefix(typ, "map["):
		return "nil", nil
	case typ == "error":
		return "nil", nil
	}
	return "", fmt.Errorf("no zero value known for result type %s: teach the generator", typ)
}

// seqType is the type of an iteration: a nil receiver's yields its error
// once.
const seqType = "iter.Seq2[Entry, error]"

// generate returns the source of o's forwarding file for methods.
func generate(o owner, methods []method) ([]byte, error) {
	var body bytes.Buffer
	used := map[string]bool{}
	for _, m := range methods {
		var params, args []string
		for _, p := range m.params {
			params = append(params, strings.Join(p.names, ", ")+" "+p.typ)
			for _, n := range p.names {
				if strings.HasPrefix(p.typ, "...") {
					n += "..."
				}
				args = append(args, n)
			}
		}
		for _, t := range append(slices.Clone(m.results), paramTypes(m)...) {
			for _, pkg := range importable {
				if strings.Contains(t, pkg+".") {
					used[pkg] = true
				}
			}
		}
		res := strings.Join(m.results, ", ")
		if len(m.results) > 1 {
			res = "(" + res + ")"
		}
		call := fmt.Sprintf("%s.cf.%s(%s)", o.recv, m.name, strings.Join(args, ", "))
		doc := fmt.Sprintf("%s is ColumnFamily.%s on %s", m.name, m.name, o.docOn)
		switch n := strings.Join(strings.Fields(o.notes[m.name]), " "); {
		case n == "":
			doc += "."
		case unicode.IsUpper(rune(n[0])):
			doc += ". " + n
		case unicode.IsPunct(rune(n[0])):
			doc += n
		default:
			doc += " " + n
		}
		body.WriteString("\n" + comment(doc))
		fmt.Fprintf(&body, "\nfunc (%s *%s) %s(%s) %s {\n", o.recv, o.typ, m.name, strings.Join(params, ", "), res)
		switch {
		case len(m.results) == 1 && m.results[0] == seqType:
			fmt.Fprintf(&body, "if %s == nil {\nreturn errSeq(%s)\n}\nreturn %s\n", o.recv, o.nilErr, call)
		case len(m.results) > 0 && m.results[len(m.results)-1] == "error":
			var zs []string
			for _, t := range m.results[:len(m.results)-1] {
				z, err := zero(t)
				if err != nil {
					return nil, fmt.Errorf("method %s: %w", m.name, err)
				}
				zs = append(zs, z)
			}
			zs = append(zs, o.nilErr)
			fmt.Fprintf(&body, "if %s == nil {\nreturn %s\n}\nreturn %s\n", o.recv, strings.Join(zs, ", "), call)
		default:
			// An accessor: the default handle of a nil receiver is nil, and
			// a nil handle's accessors return zero values.
			ret := "return "
			if len(m.results) == 0 {
				ret = ""
			}
			fmt.Fprintf(&body, "%s%s.handle().%s(%s)\n", ret, o.recv, m.name, strings.Join(args, ", "))
		}
		body.WriteString("}\n")
	}
	var src bytes.Buffer
	src.WriteString("// Code generated by internal/forwardgen from the method set of *columnfamily.ColumnFamily; DO NOT EDIT.\n\npackage kvstore\n\n")
	var imps []string
	for _, pkg := range importable {
		if used[pkg] {
			imps = append(imps, fmt.Sprintf("%q", pkg))
		}
	}
	if len(imps) > 0 {
		fmt.Fprintf(&src, "import (\n%s\n)\n\n", strings.Join(imps, "\n"))
	}
	src.WriteString(o.intro + "\n")
	src.Write(body.Bytes())
	return format.Source(src.Bytes())
}

// comment returns text as a // comment of lines of at most 76 characters
// (a longer word stays whole).
func comment(text string) string {
	var b strings.Builder
	line := "//"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > 76 && line != "//" {
			b.WriteString(line + "\n")
			line = "//"
		}
		line += " " + w
	}
	b.WriteString(line)
	return b.String()
}

func paramTypes(m method) []string {
	var ts []string
	for _, p := range m.params {
		ts = append(ts, p.typ)
	}
	return ts
}

// run generates every owner's file from the columnfamily directory cfDir
// and returns the sources by file name.
func run(cfDir string) (map[string][]byte, error) {
	methods, err := readMethods(cfDir)
	if err != nil {
		return nil, err
	}
	if len(methods) == 0 {
		return nil, fmt.Errorf("no exported methods of *ColumnFamily in %s", cfDir)
	}
	out := map[string][]byte{}
	for _, o := range owners {
		src, err := generate(o, methods)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.file, err)
		}
		out[o.file] = src
	}
	return out, nil
}

// write generates the files into kvDir from cfDir.
func write(cfDir, kvDir string) error {
	files, err := run(cfDir)
	if err != nil {
		return err
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(kvDir, name), src, 0o644); err != nil {
			return err
		}
	}
	return nil
}

package tests

import (
	"bufio"
	"bytes"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/stretchr/testify/require"
)

// apiPackages are the packages applications import, whose exported
// identifiers are the API: each has its list in testdata/api and its
// section in API_SPECIFICATION.md. Add a package here when it becomes
// public.
var apiPackages = []string{"kvstore", "columnfamily", "iterator", "ttl", "timelog", "vector", "changefeed"}

const module = "github.com/snkv-go/snkv"

// loadAPI type-checks the API packages from the compiler's export data
// (go list -export) and returns them by name.
func loadAPI(t *testing.T) map[string]*types.Package {
	t.Helper()
	args := []string{"list", "-deps", "-export", "-f", "{{.ImportPath}}\t{{.Export}}"}
	for _, p := range apiPackages {
		args = append(args, module+"/"+p)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", stderr.String())
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		path, file, _ := strings.Cut(sc.Text(), "\t")
		exports[path] = file
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	pkgs := map[string]*types.Package{}
	for _, p := range apiPackages {
		pkg, err := imp.Import(module + "/" + p)
		require.NoError(t, err)
		pkgs[p] = pkg
	}
	return pkgs
}

// apiEntry is one exported identifier: its name as the specification
// would write it (Name, or Type.Method, or Type.Field) and its declaration.
type apiEntry struct {
	name, decl string
	// types are the types its declaration names, for the internal check.
	types []types.Type
}

// exported lists pkg's exported identifiers: package-level constants,
// variables, functions and types, the exported fields of its struct
// types, the methods of its interfaces and the exported methods of its
// named types (of T and *T).
func exported(pkg *types.Package) []apiEntry {
	qual := func(p *types.Package) string {
		if p == pkg {
			return ""
		}
		return p.Name()
	}
	var out []apiEntry
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch o := obj.(type) {
		case *types.Const:
			out = append(out, apiEntry{name, fmt.Sprintf("const %s %s = %s", name, types.TypeString(o.Type(), qual), o.Val().ExactString()), []types.Type{o.Type()}})
		case *types.Var:
			out = append(out, apiEntry{name, fmt.Sprintf("var %s %s", name, types.TypeString(o.Type(), qual)), []types.Type{o.Type()}})
		case *types.Func:
			out = append(out, apiEntry{name, "func " + name + strings.TrimPrefix(types.TypeString(o.Type(), qual), "func"), []types.Type{o.Type()}})
		case *types.TypeName:
			out = append(out, typeEntries(o, qual)...)
		}
	}
	return out
}

func typeEntries(o *types.TypeName, qual types.Qualifier) []apiEntry {
	name := o.Name()
	if o.IsAlias() {
		target := types.Unalias(o.Type())
		return []apiEntry{{name, fmt.Sprintf("type %s = %s", name, types.TypeString(target, qual)), []types.Type{target}}}
	}
	named := o.Type().(*types.Named)
	var out []apiEntry
	tparams := ""
	if tp := named.TypeParams(); tp.Len() > 0 {
		var ps []string
		for i := range tp.Len() {
			p := tp.At(i)
			ps = append(ps, p.Obj().Name()+" "+types.TypeString(p.Constraint(), qual))
		}
		tparams = "[" + strings.Join(ps, ", ") + "]"
	}
	switch u := named.Underlying().(type) {
	case *types.Struct:
		out = append(out, apiEntry{name, fmt.Sprintf("type %s%s struct", name, tparams), nil})
		for i := range u.NumFields() {
			f := u.Field(i)
			if f.Exported() {
				out = append(out, apiEntry{name + "." + f.Name(), fmt.Sprintf("field %s.%s %s", name, f.Name(), types.TypeString(f.Type(), qual)), []types.Type{f.Type()}})
			}
		}
	case *types.Interface:
		out = append(out, apiEntry{name, fmt.Sprintf("type %s%s interface", name, tparams), nil})
		for i := range u.NumMethods() {
			m := u.Method(i)
			out = append(out, apiEntry{name + "." + m.Name(), fmt.Sprintf("method (%s) %s%s", name, m.Name(), strings.TrimPrefix(types.TypeString(m.Type(), qual), "func")), []types.Type{m.Type()}})
		}
		return out
	default:
		out = append(out, apiEntry{name, fmt.Sprintf("type %s%s %s", name, tparams, types.TypeString(u, qual)), []types.Type{u}})
	}
	ms := types.NewMethodSet(types.NewPointer(named))
	for i := range ms.Len() {
		m := ms.At(i).Obj().(*types.Func)
		if !m.Exported() {
			continue
		}
		recv := name
		if _, ptr := m.Type().(*types.Signature).Recv().Type().(*types.Pointer); ptr {
			recv = "*" + name
		}
		out = append(out, apiEntry{name + "." + m.Name(), fmt.Sprintf("method (%s) %s%s", recv, m.Name(), strings.TrimPrefix(types.TypeString(m.Type(), qual), "func")), []types.Type{m.Type()}})
	}
	return out
}

// internalNames returns the types from internal/ packages that t names.
func internalNames(t types.Type, seen map[types.Type]bool) []string {
	if seen[t] {
		return nil
	}
	seen[t] = true
	var out []string
	switch x := t.(type) {
	case *types.Alias:
		return internalNames(types.Unalias(x), seen)
	case *types.Named:
		if pkg := x.Obj().Pkg(); pkg != nil && strings.Contains(pkg.Path(), "/internal/") {
			out = append(out, pkg.Path()+"."+x.Obj().Name())
		}
		if args := x.TypeArgs(); args != nil {
			for i := range args.Len() {
				out = append(out, internalNames(args.At(i), seen)...)
			}
		}
	case *types.Pointer:
		out = internalNames(x.Elem(), seen)
	case *types.Slice:
		out = internalNames(x.Elem(), seen)
	case *types.Array:
		out = internalNames(x.Elem(), seen)
	case *types.Map:
		out = append(internalNames(x.Key(), seen), internalNames(x.Elem(), seen)...)
	case *types.Chan:
		out = internalNames(x.Elem(), seen)
	case *types.Signature:
		for _, tup := range []*types.Tuple{x.Params(), x.Results()} {
			for i := range tup.Len() {
				out = append(out, internalNames(tup.At(i).Type(), seen)...)
			}
		}
	case *types.Struct:
		for i := range x.NumFields() {
			if x.Field(i).Exported() {
				out = append(out, internalNames(x.Field(i).Type(), seen)...)
			}
		}
	case *types.Interface:
		for i := range x.NumMethods() {
			out = append(out, internalNames(x.Method(i).Type(), seen)...)
		}
	}
	return out
}

// The exported identifiers of the public packages, with their signatures,
// are the checked-in lists of testdata/api (go test ./tests -run API
// -update rewrites them): a change to the API shows up in review as a
// change to a list. No exported signature names a type of an internal/
// package, which an application could not name.
func TestAPI(t *testing.T) {
	pkgs := loadAPI(t)
	for _, name := range apiPackages {
		t.Run(name, func(t *testing.T) {
			entries := exported(pkgs[name])
			var lines []string
			for _, e := range entries {
				lines = append(lines, e.decl)
				for _, typ := range e.types {
					for _, in := range internalNames(typ, map[types.Type]bool{}) {
						t.Errorf("%s.%s names %s, a type of an internal package", name, e.name, in)
					}
				}
			}
			got := strings.Join(lines, "\n") + "\n"
			testutil.GoldenFile(t, filepath.Join("testdata", "api", name+".txt"), got,
				"the API of "+name+" changed: update API_SPECIFICATION.md, then go test ./tests -run API -update")
		})
	}
}

// specSection returns the part of API_SPECIFICATION.md about package name:
// from its "## Package name" heading to the next package's.
func specSection(t *testing.T, spec, name string) string {
	t.Helper()
	head := "\n## Package " + name + "\n"
	i := strings.Index(spec, head)
	require.GreaterOrEqual(t, i, 0, "API_SPECIFICATION.md has no section %q", strings.TrimSpace(head))
	rest := spec[i+len(head):]
	if j := strings.Index(rest, "\n## Package "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// inCode matches name as a word inside a code span or at the start of a
// line of a code block (indented by a tab).
func inCode(name string) *regexp.Regexp {
	q := regexp.QuoteMeta(name)
	return regexp.MustCompile("`[^`\\n]*\\b" + q + "\\b[^`\\n]*`|\\n(type|func|const|var) [^\\n]*\\b" + q + "\\b|\\n\\t+(\\w+, )*" + q + "\\b")
}

// typeSections returns the parts of section under a heading "type T" (or
// "type T[…]"): up to the next heading of the same or a higher level.
func typeSections(section, typ string) []string {
	head := regexp.MustCompile(`(?m)^(#+) type ` + regexp.QuoteMeta(typ) + `\b.*$`)
	var out []string
	for _, loc := range head.FindAllStringSubmatchIndex(section, -1) {
		level := loc[3] - loc[2]
		rest := section[loc[1]:]
		next := regexp.MustCompile(`(?m)^#{1,` + fmt.Sprint(level) + `} `).FindStringIndex(rest)
		if next != nil {
			rest = rest[:next[0]]
		}
		out = append(out, rest)
	}
	return out
}

// mentioned reports whether the specification section names the
// identifier e: a method or field as Type.Name, (*Type) Name, (t *Type)
// Name or in a list after one of them (a heading "#### func (*Store) Path,
// Default"), in the code of the type's declaration, or in code under the
// type's heading ("### type Log" and its table of methods); anything else
// as a word in code.
func mentioned(section string, e apiEntry) bool {
	typ, member, isMember := strings.Cut(e.name, ".")
	if !isMember {
		return inCode(e.name).MatchString(section)
	}
	q := regexp.QuoteMeta
	patterns := []string{
		`\b` + q(typ) + `\.` + q(member) + `\b`,
		`\(\w*\s*\*?` + q(typ) + `(\[\w+\])?\)\s+(\w+,\s*)*` + q(member) + `\b`,
		// a field or an interface method in a code block of the type
		`\ntype ` + q(typ) + `\b[^\n]*\{[^}]*\n\s+(\w+,\s*)*` + q(member) + `\b`,
	}
	for _, p := range patterns {
		if regexp.MustCompile(p).MatchString(section) {
			return true
		}
	}
	for _, sub := range typeSections(section, typ) {
		if inCode(member).MatchString(sub) {
			return true
		}
	}
	return false
}

// Every exported identifier of the public packages is in
// API_SPECIFICATION.md, in its package's section, and the specification
// has no section of plumbing for internal use.
func TestAPISpecification(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "API_SPECIFICATION.md"))
	require.NoError(t, err)
	spec := string(raw)
	require.NotContains(t, strings.ToLower(spec), "internal use", "the specification documents the API only")
	pkgs := loadAPI(t)
	for _, name := range apiPackages {
		section := specSection(t, spec, name)
		var missing []string
		for _, e := range exported(pkgs[name]) {
			if !mentioned(section, e) {
				missing = append(missing, e.name)
			}
		}
		slices.Sort(missing)
		require.Empty(t, missing, "identifiers of package %s not in its section of API_SPECIFICATION.md", name)
	}
}

// The packages that hold the types kvstore re-exports export none of the
// plumbing they once did: the catalog, the engine's handles, the scan
// contract and the SQL builders live under internal/.
func TestNoPlumbingInTypePackages(t *testing.T) {
	pkgs := loadAPI(t)
	plumbing := []string{"Registry", "Env", "Bind", "Tables", "Source", "Rows", "Bound", "NewCursor", "NewRegistry", "WriteSealHeader"}
	for _, name := range []string{"columnfamily", "ttl", "iterator"} {
		for _, e := range exported(pkgs[name]) {
			last := e.name[strings.LastIndex(e.name, ".")+1:]
			require.False(t, slices.Contains(plumbing, last) || strings.HasSuffix(last, "SQL"), "%s exports %s", name, e.name)
		}
	}
}

package tests

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// readme returns the repository's README.md.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	return string(b)
}

// The README's "sqlite3 app.db .tables" listing is what the shell lists for
// the store its Quick start makes: the default column family with a key,
// "users" with two, "sessions" with a TTL key. Before, it left out the meta
// table.
func TestREADMETablesListing(t *testing.T) {
	text := readme(t)
	_, after, ok := strings.Cut(text, "$ sqlite3 app.db .tables\n")
	require.True(t, ok, "the README has no .tables listing")
	var listed []string
	for _, line := range strings.Split(after, "\n") {
		if strings.HasPrefix(line, "$ ") || strings.HasPrefix(line, "```") {
			break
		}
		listed = append(listed, strings.Fields(line)...)
	}
	slices.Sort(listed)

	path := filepath.Join(t.TempDir(), "app.db")
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	require.NoError(t, db.Put([]byte("greeting"), []byte("hello")))
	users, err := db.ColumnFamilyOrCreate("users")
	require.NoError(t, err)
	require.NoError(t, db.Update(context.Background(), func(tx *kvstore.Tx) error {
		if err := tx.CF(users).Put([]byte("user:alice"), []byte(`{"age":31}`)); err != nil {
			return err
		}
		return tx.CF(users).Put([]byte("user:bob"), []byte(`{"age":27}`))
	}))
	sessions, err := db.ColumnFamilyOrCreate("sessions")
	require.NoError(t, err)
	require.NoError(t, sessions.PutTTL([]byte("s:42"), []byte("alice"), 30*time.Minute))
	require.NoError(t, db.Close())

	raw, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?mode=ro")
	require.NoError(t, err)
	defer raw.Close()
	want := queryStrings(t, raw, `SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	require.Equal(t, want, listed)
}

// The README's Development table says what make test runs: every
// environment setting of a test run in the Makefile's test target (the
// second run, against encrypted stores) is named in the table's make test
// row. Before, the row named only the first run.
func TestREADMEMakeTestRow(t *testing.T) {
	mk, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	_, recipe, ok := strings.Cut(string(mk), "\ntest:")
	require.True(t, ok, "the Makefile has no test target")
	prereqs, recipe, _ := strings.Cut(recipe, "\n")
	recipe, _, _ = strings.Cut(recipe, "\n\n")
	var row string
	for _, line := range strings.Split(readme(t), "\n") {
		if strings.HasPrefix(line, "| `make test` |") {
			row = line
		}
	}
	require.NotEmpty(t, row, "the README's Development table has no make test row")
	if strings.Contains(prereqs, "lint") {
		require.Contains(t, row, "staticcheck", "make test runs make lint")
	}
	env := regexp.MustCompile(`\b[A-Z][A-Z0-9_]*=\S+`)
	runs := 0
	for _, line := range strings.Split(recipe, "\n") {
		if !strings.Contains(line, "$(GO) test") {
			continue
		}
		runs++
		for _, setting := range env.FindAllString(line, -1) {
			require.Contains(t, row, setting, "make test runs %q", strings.TrimSpace(line))
		}
	}
	require.Equal(t, 5, runs, "the test target's runs changed: check the README row")
}

// Next to "the zero Options are safe defaults", the README says what
// synchronous=NORMAL can lose, how to have every commit durable, and when a
// clean Close makes the last commits durable. Before, it said none of it.
func TestREADMEDurabilitySentence(t *testing.T) {
	_, after, ok := strings.Cut(readme(t), "The zero Options are safe defaults")
	require.True(t, ok)
	next := after[:min(len(after), 600)]
	for _, s := range []string{"power loss", "kvstore.SyncFull", "Close", "no other\n\t// process"} {
		require.Contains(t, next, s)
	}
}

// No Go snippet of the README names a variable after a package its Quick
// start imports. Before, the time series snippet called its log "log",
// hiding the log package the Quick start uses.
func TestREADMESnippetsKeepPackageNames(t *testing.T) {
	text := readme(t)
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(text, -1)
	require.NotEmpty(t, blocks)
	imports := regexp.MustCompile(`(?m)^\t"([a-z/]+)"$`).FindAllStringSubmatch(blocks[0][1], -1)
	require.NotEmpty(t, imports, "the Quick start imports nothing?")
	for _, imp := range imports {
		pkg := imp[1][strings.LastIndex(imp[1], "/")+1:]
		decl := regexp.MustCompile(`(?m)(^|[\s(,])` + pkg + `\s*(,\s*\w+\s*)?:=`)
		for i, b := range blocks {
			require.False(t, decl.MatchString(b[1]), "Go snippet %d declares a variable %q, hiding the package", i, pkg)
		}
	}
}

// makeTargets returns the Makefile's targets (the rules it defines) but
// all, the default that runs test.
func makeTargets(t *testing.T) (string, []string) {
	t.Helper()
	mk, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	var targets []string
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):([^=]|$)`).FindAllStringSubmatch(string(mk), -1) {
		if m[1] != "all" {
			targets = append(targets, m[1])
		}
	}
	require.NotEmpty(t, targets)
	return string(mk), targets
}

// The README's Development table has a row for every target of the
// Makefile, and names no target the Makefile lacks; its make fuzz row names
// every fuzzer make fuzz runs. Before, it missed lint, tools and three
// benchmark targets, and its fuzz row named one fuzzer of two.
func TestREADMEMakeTargets(t *testing.T) {
	mk, targets := makeTargets(t)
	rows := map[string]string{}
	for _, line := range strings.Split(readme(t), "\n") {
		first, _, ok := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		if !ok || !strings.HasPrefix(line, "| `make ") {
			continue
		}
		for _, m := range regexp.MustCompile("`make ([a-z0-9-]+)`").FindAllStringSubmatch(first, -1) {
			rows[m[1]] = line
		}
	}
	for name := range rows {
		require.Contains(t, targets, name, "the README lists make %s, which the Makefile does not define", name)
	}
	for _, name := range targets {
		require.Contains(t, rows, name, "the README's Development table has no row for make %s", name)
	}
	_, recipe, ok := strings.Cut(mk, "\nfuzz:")
	require.True(t, ok)
	recipe, _, _ = strings.Cut(recipe, "\n\n")
	fuzzers := regexp.MustCompile(`-fuzz (\w+)`).FindAllStringSubmatch(recipe, -1)
	require.NotEmpty(t, fuzzers)
	for _, f := range fuzzers {
		require.Contains(t, rows["fuzz"], "`"+f[1]+"`", "make fuzz runs %s", f[1])
	}
}

// layoutSection returns the README's layout paragraph and list: from
// "Layout" to the next heading.
func layoutSection(t *testing.T) string {
	t.Helper()
	_, after, ok := strings.Cut(readme(t), "\nLayout (")
	require.True(t, ok, "the README has no layout paragraph")
	if i := strings.Index(after, "\n## "); i >= 0 {
		after = after[:i]
	}
	return after
}

// The README's layout names every top-level directory and every Go
// package of the repository (bench/ included), and every path it names
// exists. Before, it left out vector, most of internal/, cmd/, bench/ and
// scripts/.
func TestREADMELayoutNamesEveryPackage(t *testing.T) {
	section := layoutSection(t)
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z][a-z0-9_-]*(?:/[a-z0-9_.…-]+)*/?)`").FindAllStringSubmatch(section, -1) {
		name := strings.TrimSuffix(strings.TrimSuffix(m[1], "/…"), "/")
		named[name] = true
		if strings.ContainsAny(name, "/") || !slices.Contains([]string{"kvstore", "columnfamily", "iterator", "ttl", "timelog", "vector"}, name) {
			_, err := os.Stat(filepath.Join("..", name))
			require.NoError(t, err, "the README's layout names %s, which does not exist", m[1])
		}
	}
	top, err := os.ReadDir("..")
	require.NoError(t, err)
	for _, e := range top {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || e.Name() == "bin" {
			continue
		}
		ok := named[e.Name()]
		for n := range named {
			ok = ok || strings.HasPrefix(n, e.Name()+"/")
		}
		require.True(t, ok, "the README's layout does not name %s/", e.Name())
	}
	for _, f := range repoFiles(t) {
		dir := filepath.ToSlash(filepath.Dir(f))
		if strings.HasSuffix(f, ".go") && !strings.Contains(dir, "testdata") {
			require.True(t, named[dir], "the README's layout does not name the package %s", dir)
		}
	}
}

// rank is a package's place in the README's import order: a package
// imports only packages of a lower rank. The order is the line of the
// README's layout that chains the packages with arrows.
func importRanks(t *testing.T) map[string]int {
	t.Helper()
	section := layoutSection(t)
	i := strings.Index(section, " → ")
	require.GreaterOrEqual(t, i, 0, "the README's layout gives no import order")
	start := strings.LastIndex(section[:i], ":\n") + 2
	end := start + strings.Index(section[start:], ".")
	chain := strings.Split(strings.ReplaceAll(section[start:end], "\n", " "), "→")
	ranks := map[string]int{}
	for i, part := range chain {
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(part, -1) {
			ranks[strings.TrimSuffix(m[1], "/…")] = len(chain) - i
		}
	}
	require.Contains(t, ranks, "kvstore")
	require.Contains(t, ranks, "internal")
	return ranks
}

// The README's import order is what the packages import, but for the
// exceptions it names, and it names every exception there is: "`A` imports
// `B`" for a package, "`A`'s tests import `B`" for its test files. Before,
// it said no package imports one above it, while
// internal/testutil/tempstore imports kvstore.
func TestREADMEImportOrder(t *testing.T) {
	ranks := importRanks(t)
	rankOf := func(path string) (int, bool) {
		p := strings.TrimPrefix(path, module+"/")
		if p == path {
			return 0, false // another module
		}
		for p != "." {
			if r, ok := ranks[p]; ok {
				return r, true
			}
			p = filepath.ToSlash(filepath.Dir(p))
		}
		return 0, false
	}
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}\t{{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	require.NoError(t, err)
	var found []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Split(line, "\t")
		require.Len(t, fields, 3, line)
		own, ok := rankOf(fields[0])
		if !ok {
			continue // tests/, which may import anything
		}
		name := strings.TrimPrefix(fields[0], module+"/")
		above := func(imports string, form string) {
			for _, imp := range strings.Fields(imports) {
				r, ok := rankOf(imp)
				if ok && r > own && imp != fields[0] {
					e := fmt.Sprintf(form, name, strings.TrimPrefix(imp, module+"/"))
					if !slices.Contains(found, e) {
						found = append(found, e)
					}
				}
			}
		}
		above(fields[1], "%s imports %s")
		above(fields[2], "%s's tests import %s")
	}
	var listed []string
	text := strings.ReplaceAll(layoutSection(t), "\n", " ")
	for _, m := range regexp.MustCompile("`([^`]+)`('s tests)? imports? ((?:`[^`]+`(?: and |, )?)+)").FindAllStringSubmatch(text, -1) {
		form := "%s imports %s"
		if m[2] != "" {
			form = "%s's tests import %s"
		}
		for _, imp := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[3], -1) {
			listed = append(listed, fmt.Sprintf(form, m[1], imp[1]))
		}
	}
	// a test file's import that the package itself makes is the package's
	found = slices.DeleteFunc(found, func(e string) bool {
		return strings.Contains(e, "'s tests import ") && slices.Contains(found, strings.Replace(e, "'s tests import ", " imports ", 1))
	})
	slices.Sort(found)
	slices.Sort(listed)
	require.Equal(t, found, listed, "the imports against the README's order (left) and the exceptions the README names (right)")
}

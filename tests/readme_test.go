package tests

import (
	"context"
	"database/sql"
	"os"
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
	rows, err := raw.Query(`SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	require.NoError(t, err)
	var want []string
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		want = append(want, n)
	}
	require.NoError(t, rows.Err())
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

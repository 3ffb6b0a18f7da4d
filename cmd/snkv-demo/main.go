// Command snkv-demo is a short tour of snkv. It creates a store in a
// temporary directory, writes to the default column family and to a "users"
// column family, runs a transaction, stores a key with a time-to-live,
// iterates a key prefix and prints the store's statistics, then keeps a
// time series in a log (package timelog). It then shows
// that the file is an ordinary SQLite database: it prints what the sqlite3
// shell would show for it and, when the sqlite3 program is on the PATH, runs
// the shell against the file for real. The temporary directory is removed
// on exit.
//
// Run it with
//
//	make demo
//
// or
//
//	go run ./cmd/snkv-demo
package main

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	_ "modernc.org/sqlite" // database/sql driver: the demo reads the file as another tool would
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "snkv-demo:", err)
		os.Exit(1)
	}
}

func run() error {
	dir, err := os.MkdirTemp("", "snkv-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "demo.db")
	ctx := context.Background()

	step("open a store")
	db, err := kvstore.Open(path, kvstore.Options{})
	if err != nil {
		return err
	}
	defer db.Close() // a second Close after the explicit one below is harmless
	fmt.Printf("  kvstore.Open(%q, kvstore.Options{})\n", path)

	step("write and read the default column family")
	if err := db.Put([]byte("greeting"), []byte("hello, snkv")); err != nil {
		return err
	}
	v, err := db.Get([]byte("greeting"))
	if err != nil {
		return err
	}
	fmt.Printf("  Get(greeting) = %q\n", v)

	step(`create the "users" column family and fill it in one transaction`)
	users, err := db.CreateColumnFamily("users")
	if err != nil {
		return err
	}
	err = db.Update(ctx, func(tx *kvstore.Tx) error {
		u := tx.CF(users)
		for _, kv := range [][2]string{
			{"user:alice", `{"name":"Alice","age":31}`},
			{"user:bob", `{"name":"Bob","age":27}`},
			{"user:carol", `{"name":"Carol","age":45}`},
			{"admin:root", `{"name":"Root"}`},
		} {
			if err := u.Put([]byte(kv[0]), []byte(kv[1])); err != nil {
				return err
			}
		}
		// The same transaction also writes the default column family.
		return tx.Put([]byte("users:count"), []byte("4"))
	})
	if err != nil {
		return err
	}
	fmt.Println("  Update: 4 users and a counter committed atomically")

	step(`a key with a time-to-live in the "sessions" column family`)
	sessions, err := db.ColumnFamilyOrCreate("sessions")
	if err != nil {
		return err
	}
	if err := sessions.PutTTL([]byte("sess:42"), []byte("alice"), time.Hour); err != nil {
		return err
	}
	left, err := sessions.TTL([]byte("sess:42"))
	if err != nil {
		return err
	}
	fmt.Printf("  PutTTL(sess:42, alice, 1h); TTL(sess:42) = %v\n", left.Round(time.Second))
	if left, err = db.TTL([]byte("greeting")); err != nil {
		return err
	}
	fmt.Printf("  TTL(greeting) = %v (kvstore.NoTTL: a permanent key)\n", left)

	step(`iterate the prefix "user:" of "users"`)
	for e, err := range users.Prefix([]byte("user:")) {
		if err != nil {
			return err
		}
		fmt.Printf("  %-12s %s\n", e.Key, e.Value)
	}

	step("column families and statistics")
	names, err := db.ListColumnFamilies()
	if err != nil {
		return err
	}
	fmt.Printf("  ListColumnFamilies() = %v\n", names)
	st, err := db.Stats(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("  puts=%d gets=%d hits=%d commits=%d iterators=%d\n",
		st.Puts, st.Gets, st.Hits, st.Commits, st.Iterators)
	fmt.Printf("  column families=%d pages=%d x %d B, file=%d B, wal=%d B\n",
		st.ColumnFamilies, st.PageCount, st.PageSize, st.FileSize, st.WALSize)
	if err := db.IntegrityCheck(ctx); err != nil {
		return err
	}
	fmt.Println("  IntegrityCheck() = nil")

	var rows []string
	for e, err := range users.All() {
		if err != nil {
			return err
		}
		rows = append(rows, strings.ToUpper(hex.EncodeToString(e.Key))+"|"+strings.ToUpper(hex.EncodeToString(e.Value)))
	}
	// Close folds the write-ahead log into the file, so that it is complete
	// on its own.
	if err := db.Close(); err != nil {
		return err
	}

	if err := timelogTour(ctx, dir); err != nil {
		return err
	}
	tables, err := shellTables(path)
	if err != nil {
		return err
	}

	step("the file is an ordinary SQLite database")
	fmt.Println("  Every column family is a table read through a view; the catalog, the format")
	fmt.Println("  version and TTL state live in hidden __snkv_ tables.")
	fmt.Printf("  $ sqlite3 %s .tables\n", path)
	fmt.Println("  would list:")
	fmt.Println("    " + strings.Join(tables, " "))
	query := `SELECT hex(key), hex(value) FROM "users" ORDER BY key;`
	fmt.Printf("  $ sqlite3 %s\n", shellQuote([]string{path, query}))
	fmt.Println("  would print:")
	for _, r := range rows {
		fmt.Println("    " + r)
	}

	shell, err := exec.LookPath("sqlite3")
	if err != nil {
		fmt.Println("\n  (sqlite3 is not on the PATH; install it to see the real shell output)")
		return nil
	}
	step("the real sqlite3 shell")
	for _, sc := range shellCommands(path, query) {
		cmd := exec.Command(shell, sc.args...)
		if sc.stdin == "" {
			fmt.Printf("  $ sqlite3 %s\n", shellQuote(sc.args))
		} else {
			fmt.Printf("  $ sqlite3 %s <<'SQL'\n", shellQuote(sc.args))
			for _, line := range strings.Split(sc.stdin, "\n") {
				fmt.Println("  " + line)
			}
			fmt.Println("  SQL")
			cmd.Stdin = strings.NewReader(sc.stdin)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("sqlite3 %s: %w\n%s", strings.Join(sc.args, " "), err, out)
		}
		for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
			fmt.Println("    " + line)
		}
	}
	return nil
}

func step(title string) { fmt.Printf("\n== %s\n", title) }

// shellTables returns what the sqlite3 shell's .tables lists for the
// database at path (its tables and views, SQLite's own left out, sorted),
// read from the file itself through database/sql.
func shellTables(path string) ([]string, error) {
	raw, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	rows, err := raw.Query(`SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

// expiringSQL lists the keys of the "sessions" column family that have a
// TTL, soonest first, decoding the 8-byte big-endian expiry of the expiry
// index with a recursive query (the shell has no function for it).
const expiringSQL = `WITH RECURSIVE e(key, hx, ms) AS (
  SELECT key, hex(expire_ms), 0 FROM "__snkv_ttl_e__sessions"
  UNION ALL
  SELECT key, substr(hx, 2), ms * 16 + instr('0123456789ABCDEF', substr(hx, 1, 1)) - 1
  FROM e WHERE hx <> '')
SELECT CAST(key AS TEXT), ms, strftime('%Y-%m-%d %H:%M:%f', ms / 1000.0, 'unixepoch')
FROM e WHERE hx = '' ORDER BY ms, key;`

// shellCommand is one sqlite3 invocation: its arguments and, for long SQL,
// its standard input.
type shellCommand struct {
	args  []string
	stdin string
}

// shellCommands are the sqlite3 invocations the demo runs.
func shellCommands(path, query string) []shellCommand {
	return []shellCommand{
		{args: []string{path, ".tables"}},
		{args: []string{path, `SELECT name FROM "__snkv_catalog" ORDER BY name;`}},
		{args: []string{path, query}},
		{args: []string{"-column", path, `SELECT CAST(key AS TEXT), CAST(value AS TEXT) FROM "users" ORDER BY key;`}},
		{args: []string{path}, stdin: expiringSQL},
	}
}

// shellQuote renders args as they would be typed in a POSIX shell.
func shellQuote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && !strings.ContainsAny(a, " \t\"'`$\\;*()|<>&,") {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

package kvstore_test

import (
	"bytes"
	"context"
	"database/sql"
	"iter"
	"maps"
	"os"
	"slices"
	"testing"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/internal/testutil/tempstore"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // database/sql driver "sqlite", to play a foreign tool on store files
)

// tempPath returns a path for a new store file in a fresh temporary
// directory.
func tempPath(t testing.TB) string {
	t.Helper()
	return tempstore.Path(t, "store.db")
}

// openTemp opens a new store in t.TempDir(), closed when the test ends.
func openTemp(t testing.TB, opts kvstore.Options) *kvstore.Store {
	t.Helper()
	db, _ := tempstore.Open(t, opts)
	return db
}

// openAt opens the store at path (empty for in-memory), closed when the
// test ends unless the test closed it already.
func openAt(t testing.TB, path string, opts kvstore.Options) *kvstore.Store {
	t.Helper()
	return tempstore.OpenAt(t, path, opts)
}

// storeKinds lists the two kinds of store every basic behaviour must hold
// for: a file and an in-memory one.
func storeKinds() []struct {
	name string
	open func(t testing.TB, opts kvstore.Options) *kvstore.Store
} {
	return []struct {
		name string
		open func(t testing.TB, opts kvstore.Options) *kvstore.Store
	}{
		{"file", openTemp},
		{"memory", func(t testing.TB, opts kvstore.Options) *kvstore.Store { return openAt(t, "", opts) }},
	}
}

// inEachKind runs test, as a subtest named by the kind, on a new store of
// each kind storeKinds lists, opened with opts.
func inEachKind(t *testing.T, opts kvstore.Options, test func(t *testing.T, db *kvstore.Store)) {
	t.Helper()
	for _, kind := range storeKinds() {
		t.Run(kind.name, func(t *testing.T) { test(t, kind.open(t, opts)) })
	}
}

// kv is one expected key-value pair, as strings for readable diffs.
type kv struct{ K, V string }

// collect drains an iteration, failing the test on an error.
func collect(t testing.TB, seq iter.Seq2[kvstore.Entry, error]) []kv {
	t.Helper()
	out := []kv{}
	for e, err := range seq {
		require.NoError(t, err)
		out = append(out, kv{string(e.Key), string(e.Value)})
	}
	return out
}

// contents returns every key-value pair of cf in key order.
func contents(t testing.TB, cf *kvstore.ColumnFamily) []kv {
	t.Helper()
	return collect(t, cf.All())
}

// snapshotAll returns the contents of every column family of db, by name.
func snapshotAll(t testing.TB, db *kvstore.Store) map[string][]kv {
	t.Helper()
	names, err := db.ListColumnFamilies()
	require.NoError(t, err)
	out := make(map[string][]kv, len(names))
	for _, name := range names {
		cf, err := db.OpenColumnFamily(name)
		require.NoError(t, err)
		out[name] = contents(t, cf)
	}
	return out
}

// model is a sorted-map model of a column family's contents.
type model map[string]string

// sorted returns the model's pairs in bytewise key order.
func (m model) sorted() []kv {
	keys := slices.Sorted(maps.Keys(m))
	out := make([]kv, 0, len(keys))
	for _, k := range keys {
		out = append(out, kv{k, m[k]})
	}
	return out
}

// selectKeys returns the model's pairs visited by opts, in the order the
// iteration visits them.
func (m model) selectKeys(opts kvstore.IterOptions) []kv {
	out := []kv{}
	for _, p := range m.sorted() {
		k := []byte(p.K)
		if !bytes.HasPrefix(k, opts.Prefix) {
			continue
		}
		if len(opts.Start) > 0 && bytes.Compare(k, opts.Start) < 0 {
			continue
		}
		if opts.End != nil && bytes.Compare(k, opts.End) >= 0 {
			continue
		}
		out = append(out, p)
	}
	if opts.Reverse {
		slices.Reverse(out)
	}
	return out
}

// rawDB opens path directly through database/sql, the way another tool
// (the sqlite3 shell, a replication tool) would.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = raw.Close() })
	return raw
}

// rawExec runs statements on path through database/sql and closes the
// connection.
func rawExec(t testing.TB, path string, stmts ...string) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer raw.Close()
	raw.SetMaxOpenConns(1) // one connection: a PRAGMA holds for the statements after it
	for _, q := range stmts {
		_, err := raw.Exec(q)
		require.NoError(t, err, q)
	}
}

// lastErr drains an iteration and returns the last error it yielded, or
// nil.
func lastErr(seq iter.Seq2[kvstore.Entry, error]) error {
	var last error
	for _, err := range seq {
		if err != nil {
			last = err
		}
	}
	return last
}

// createHidden creates the hidden table kind/name in a transaction of its
// own.
func createHidden(t testing.TB, db *kvstore.Store, kind, name string) *kvstore.ColumnFamily {
	t.Helper()
	var h *kvstore.ColumnFamily
	require.NoError(t, db.Update(context.Background(), func(tx *kvstore.Tx) error {
		var err error
		h, err = layer.CreateHiddenTable(tx, kind, name)
		return err
	}))
	return h
}

// b is shorthand for a byte slice of s.
func b(s string) []byte { return []byte(s) }

// rawOpen opens the file with database/sql on one connection, as another
// tool would.
func rawOpen(t testing.TB, path string) *sql.DB {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	raw.SetMaxOpenConns(1)
	return raw
}

// requireRefusedUntouched says that a refused Open left the file at path
// byte for byte as before (its journal mode included) and made no -wal.
func requireRefusedUntouched(t *testing.T, path string, before []byte) {
	t.Helper()
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after, "a refused open leaves the file byte for byte as it was (journal mode included)")
	_, err = os.Stat(path + "-wal")
	require.True(t, os.IsNotExist(err), "a refused open does not switch the file to WAL")
}

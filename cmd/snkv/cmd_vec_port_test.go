package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/vectest"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/stretchr/testify/require"
)

// vecFixture writes a store with a column family and two vector indexes:
// "docs" (cosine, 300 vectors of 16 dimensions, with values, metadata —
// one not UTF-8 —, expiries, one expired at t0, a binary key) and "empty"
// (L2, int8, M 8, no vector). The store's clock is an hour before t0.
func vecFixture(t *testing.T) (path string, set *vectest.Set) {
	t.Helper()
	ctx := context.Background()
	path = filepath.Join(t.TempDir(), "vec.db")
	db, err := kvstore.Open(path, kvstore.Options{Clock: kvstore.NewManualClock(t0.Add(-time.Hour))})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error { return tx.Put([]byte("plain"), []byte("row")) }))
	set = vectest.Generate(vectest.Clustered(300, 20, 16))
	docs, err := vector.Open(ctx, db, "docs", vector.Options{Dim: 16, Metric: vector.Cosine})
	require.NoError(t, err)
	items := make([]vector.Item, len(set.Base))
	for i, v := range set.Base {
		items[i] = vector.Item{Key: []byte(fmt.Sprintf("doc/%03d", i)), Vector: v}
		switch i % 5 {
		case 0:
			items[i].Meta = map[string]string{"lang": "en"}
			items[i].Value = []byte(fmt.Sprintf("body %d", i))
		case 1:
			items[i].TTL = 2 * time.Hour
		case 2:
			items[i].Meta = map[string]string{"raw": "\xff\xfe"}
			items[i].Value = []byte{0, 1, 2}
		}
	}
	items[3].TTL = 30 * time.Minute // expired at t0
	items[4].Key = []byte("bin\x00\xff")
	require.NoError(t, docs.PutBatch(ctx, items))
	require.NoError(t, docs.Close())
	empty, err := vector.Open(ctx, db, "empty", vector.Options{Dim: 4, Storage: vector.Int8, M: 8})
	require.NoError(t, err)
	require.NoError(t, empty.Close())
	return path, set
}

// readIndexes reads every index of the store at path with the library, at
// t0: its recorded options and its live entries in key order.
func readIndexes(t *testing.T, path string) map[string]any {
	t.Helper()
	ctx := context.Background()
	db, err := kvstore.Open(path, kvstore.Options{Clock: kvstore.NewManualClock(t0)})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	names, err := vector.List(ctx, db)
	require.NoError(t, err)
	out := map[string]any{}
	for _, name := range names {
		ix, err := vector.Open(ctx, db, name, vector.Options{})
		require.NoError(t, err)
		st, err := ix.Stats(ctx)
		require.NoError(t, err)
		var entries []vector.Entry
		require.NoError(t, db.View(ctx, func(tx *kvstore.Tx) error {
			for e, err := range ix.In(tx).Scan(kvstore.IterOptions{}) {
				if err != nil {
					return err
				}
				e.ExpireAt = e.ExpireAt.UTC()
				entries = append(entries, e)
			}
			return nil
		}))
		require.NoError(t, ix.Close())
		out[name] = []any{st.Dim, st.Metric, st.Storage, st.M, st.EfConstruction, entries}
	}
	return out
}

// An export carries the vector indexes (options, vectors bit for bit,
// values, metadata, expiries; expired vectors left out), and an import of
// it into a new store gives the same indexes, on which every search gives
// the same hits as on the original.
func TestVecExportImportRoundTrip(t *testing.T) {
	path, set := vecFixture(t)
	dir := t.TempDir()
	exp := filepath.Join(dir, "exp.jsonl")
	r := cli(t, nil, "export", path, "--out", exp)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "and 299 vectors from 2 vector indexes")
	raw, err := os.ReadFile(exp)
	require.NoError(t, err)
	require.Contains(t, string(raw), `{"vec":"empty","dim":4,"metric":"l2","storage":"int8","m":8,"ef_construction":128}`)
	require.Contains(t, string(raw), `"meta_base64":{"cmF3":"//4="}`)

	copyPath := filepath.Join(dir, "copy.db")
	r = cli(t, nil, "import", copyPath, "--create", "--in", exp, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var sum map[string]int
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &sum))
	require.Equal(t, map[string]int{"imported": 300, "skipped_expired": 0, "column_families": 1, "vector_indexes": 2}, sum,
		"1 plain key and 299 vectors")

	want := readIndexes(t, path)
	require.Len(t, want["docs"].([]any)[5], 299)
	require.Equal(t, want, readIndexes(t, copyPath))

	for i, q := range set.Queries {
		qs, err := json.Marshal(q)
		require.NoError(t, err)
		args := []string{"docs", "--vector", string(qs), "-k", "10", "--ef", "300", "--json"}
		if i%2 == 1 {
			args = append(args, "--where", "lang=en", "--values")
		}
		a := cli(t, nil, append([]string{"vec", "search", path}, args...)...)
		require.Equal(t, 0, a.code, a.stderr)
		b := cli(t, nil, append([]string{"vec", "search", copyPath}, args...)...)
		require.Equal(t, 0, b.code, b.stderr)
		require.Equal(t, a.stdout, b.stdout, "query %d", i)
		require.Equal(t, 10, strings.Count(a.stdout, "\n"))
	}

	// Imported again into the copy: the index exists with the same
	// options, and its vectors are replaced by themselves.
	r = cli(t, nil, "import", copyPath, "--in", exp)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, want, readIndexes(t, copyPath))
}

// Bad vector lines stop the import with the line's number, and lose
// nothing: an index the import created is gone again, and an existing one
// keeps what it had.
func TestVecImportRefusesBadLines(t *testing.T) {
	path, _ := vecFixture(t)
	before := readIndexes(t, path)
	for _, c := range []struct{ name, input, msg string }{
		{"vector before header", `{"vec":"docs","key":"k","vector":[1,2]}`, "before the index's first line"},
		{"dim differs", `{"vec":"docs","dim":3,"metric":"cosine","storage":"f32"}`, "differ"},
		{"bad metric", `{"vec":"new","dim":3,"metric":"manhattan","storage":"f32"}`, `metric "manhattan"`},
		{"no dim", `{"vec":"new","metric":"l2"}`, `missing "dim"`},
		{"wrong length", "{\"vec\":\"new\",\"dim\":3,\"metric\":\"l2\",\"storage\":\"f32\"}\n{\"vec\":\"new\",\"key\":\"a\",\"vector\":[1,2,3]}\n{\"vec\":\"new\",\"key\":\"b\",\"vector\":[1,2]}", "line 3"},
		{"both cf and vec", `{"cf":"default","vec":"docs","key":"a"}`, `both "cf" and "vec"`},
		{"vector in a cf line", `{"cf":"default","key":"a","value":"b","vector":[1]}`, `without "vec"`},
		{"options on a vector line", "{\"vec\":\"docs\",\"dim\":16,\"metric\":\"cosine\",\"storage\":\"f32\"}\n{\"vec\":\"docs\",\"key\":\"a\",\"dim\":16,\"vector\":[1]}", "index options"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := cli(t, strings.NewReader(c.input), "import", path)
			require.NotEqual(t, 0, r.code)
			requireClean(t, r)
			require.Contains(t, r.stderr, c.msg)
			require.Equal(t, before, readIndexes(t, path))
		})
	}
}

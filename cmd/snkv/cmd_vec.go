package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/spf13/cobra"
)

const vecLong = `Vector indexes of the store (package vector): named sets of float32 vectors,
each under a key, with an optional value, metadata (key=value pairs) and
expiry, searched by nearest neighbours.

ls, stats, get, search and check open the store read-only (an index is
loaded into memory for the command); create, drop, put, del and rebuild
write. Vectors are JSON arrays of numbers, given with --vector or read from
--vector-file ('-': stdin). A missing index or key: exit code 3; bad input
(a vector of the wrong dimension, a flag out of range, a TTL under a
millisecond): exit code 2.`

// vecFlags are the flags of the vec subcommands.
type vecFlags struct {
	dim                int
	metric, storage    string
	vec, vecFile, like string
	ttl, at            string
	meta, where        []string
	k, ef              int
	prefix             string
	maxDist            float64
	values             bool
}

func (a *app) vecCommand() *cobra.Command {
	var f vecFlags
	c := group(&cobra.Command{Use: "vec", Short: "Vector indexes: ls, stats, create, drop, put, get, del, search, check, rebuild", Long: vecLong})
	for _, sc := range []*cobra.Command{takes(a.vecLsCommand(), "json,escape"), takes(a.vecStatsCommand(), "json"),
		takes(a.vecCreateCommand(&f), ""), takes(a.vecDropCommand(), ""), takes(a.vecPutCommand(&f), "hex,base64"),
		takes(a.vecGetCommand(), "json,hex,base64,escape"), takes(a.vecDelCommand(), "hex,base64"),
		takes(a.vecSearchCommand(&f), "json,escape"), takes(a.vecCheckCommand(), ""), takes(a.vecRebuildCommand(), "")} {
		c.AddCommand(sc)
	}
	return c
}

// withIndex opens the store at path and its index name and runs fn.
func (a *app) withIndex(cmd *cobra.Command, path, name string, write bool, fn func(db *kvstore.Store, ix *vector.Index) error) error {
	return a.withStore(path, write, func(db *kvstore.Store) (err error) {
		ix, err := vector.Open(cmd.Context(), db, name, vector.Options{})
		if err != nil {
			return vecError(name, err)
		}
		defer func() {
			if cerr := ix.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}()
		return fn(db, ix)
	})
}

func vecError(name string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, vector.ErrNoIndex):
		return notFound{fmt.Sprintf("vector index %q does not exist (see 'snkv vec ls')", name)}
	case errors.Is(err, kvstore.ErrInvalidName), errors.Is(err, vector.ErrDim), errors.Is(err, vector.ErrVector), errors.Is(err, vector.ErrMismatch),
		errors.Is(err, kvstore.ErrInvalidOption), errors.Is(err, kvstore.ErrInvalidTTL), errors.Is(err, kvstore.ErrInvalidKey),
		errors.Is(err, kvstore.ErrKeyTooLarge), errors.Is(err, kvstore.ErrValueTooLarge):
		return usageError{err}
	}
	return err
}

// metaText shows metadata for a table: k=v pairs in key order, joined by
// commas.
func metaText(m map[string]string) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for i, k := range ks {
		ks[i] = k + "=" + m[k]
	}
	return strings.Join(ks, ",")
}

// vecMissing is the error of vec get and del when some of the n keys
// given were missing: exit code 3, naming them.
func vecMissing(index string, missing []string, n int, others string) error {
	switch {
	case len(missing) == 0:
		return nil
	case n == 1:
		return notFound{fmt.Sprintf("key %s is not in vector index %q", missing[0], index)}
	}
	return notFound{fmt.Sprintf("%d of %d keys are not in vector index %q: %s%s", len(missing), n, index, strings.Join(missing, ", "), others)}
}

// vecInput reads the vector of --vector, --vector-file or --like.
func (a *app) vecInput(f vecFlags, ix *vector.Index, name string) ([]float32, error) {
	given := 0
	for _, s := range []string{f.vec, f.vecFile, f.like} {
		if s != "" {
			given++
		}
	}
	if given != 1 {
		return nil, usagef("give exactly one of --vector, --vector-file%s", map[bool]string{true: ", --like", false: ""}[ix != nil])
	}
	if f.like != "" {
		key, err := a.inputs().arg("KEY", f.like)
		if err != nil {
			return nil, err
		}
		e, err := ix.Get(a.ctx, key)
		if errors.Is(err, kvstore.ErrNotFound) && !errors.Is(err, vector.ErrNoIndex) {
			return nil, vecMissing(name, []string{fmt.Sprintf("%q", showText(key))}, 1, "")
		}
		return e.Vector, err
	}
	text := []byte(f.vec)
	if f.vecFile != "" {
		var err error
		if f.vecFile == "-" {
			text, err = io.ReadAll(a.in)
		} else {
			text, err = os.ReadFile(f.vecFile)
		}
		if err != nil {
			return nil, err
		}
	}
	var v []float32
	if err := json.Unmarshal(text, &v); err != nil {
		return nil, usagef("the vector is not a JSON array of numbers: %v", err)
	}
	return v, nil
}

func pairs(list []string, flag string) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, p := range list {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, usagef("%s %q: want k=v", flag, p)
		}
		m[k] = v
	}
	return m, nil
}

// parseVecKinds reads --metric and --storage by the names the vector
// package gives its metrics and storages.
func parseVecKinds(metric, storage string) (vector.Metric, vector.Storage, error) {
	m, ok := byName([]vector.Metric{vector.L2, vector.Cosine, vector.Dot}, metric)
	if !ok {
		return 0, 0, usagef("--metric %q: l2, cosine or dot", metric)
	}
	s, ok := byName([]vector.Storage{vector.F32, vector.F16, vector.Int8}, storage)
	if !ok {
		return 0, 0, usagef("--storage %q: f32, f16 or int8", storage)
	}
	return m, s, nil
}

// byName returns the element of all whose String is name.
func byName[T fmt.Stringer](all []T, name string) (T, bool) {
	for _, x := range all {
		if x.String() == name {
			return x, true
		}
	}
	var zero T
	return zero, false
}

func (a *app) vecStats(cmd *cobra.Command, db *kvstore.Store, names []string) error {
	t := a.table("INDEX", "DIM", "METRIC", "STORAGE", "COUNT", "TOMBSTONES", "MEMORY", "UNSAVED")
	for _, name := range names {
		ix, err := vector.Open(cmd.Context(), db, name, vector.Options{})
		if err != nil {
			return vecError(name, err)
		}
		st, err := ix.Stats(cmd.Context())
		_ = ix.Close()
		if err != nil {
			return err
		}
		if a.json {
			if err := a.emit(map[string]any{"index": name, "dim": st.Dim, "metric": st.Metric.String(), "storage": st.Storage.String(),
				"count": st.Count, "tombstones": st.Tombstones, "memory_bytes": st.MemoryBytes, "unsaved": st.Unpersisted, "seq": st.Seq}); err != nil {
				return err
			}
			continue
		}
		t.row(a.show([]byte(name)), itoa(int64(st.Dim)), st.Metric.String(), st.Storage.String(), itoa(int64(st.Count)),
			itoa(int64(st.Tombstones)), itoa(st.MemoryBytes), itoa(int64(st.Unpersisted)))
	}
	if a.json {
		return nil
	}
	return t.flush()
}

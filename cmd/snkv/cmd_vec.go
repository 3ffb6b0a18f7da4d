package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
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
	ls := &cobra.Command{Use: "ls FILE", Short: "List the vector indexes with their dimension, metric and count (read-only)", Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(args[0], false, func(db *kvstore.Store) error {
				names, err := vector.List(cmd.Context(), db)
				if err != nil {
					return err
				}
				return a.vecStats(cmd, db, names)
			})
		}}
	stats := &cobra.Command{Use: "stats FILE [INDEX]", Short: "Show an index's figures (read-only)", Args: nargs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(args[0], false, func(db *kvstore.Store) error {
				names := args[1:]
				if len(names) == 0 {
					var err error
					if names, err = vector.List(cmd.Context(), db); err != nil {
						return err
					}
				}
				return a.vecStats(cmd, db, names)
			})
		}}
	create := &cobra.Command{Use: "create FILE INDEX --dim N [--metric l2|cosine|dot] [--storage f32|f16|int8]", Short: "Create a vector index", Args: nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, s, err := parseVecKinds(f.metric, f.storage)
			if err != nil {
				return err
			}
			if f.dim <= 0 {
				return usagef("vec create needs --dim")
			}
			return a.withStore(args[0], true, func(db *kvstore.Store) error {
				if names, err := vector.List(cmd.Context(), db); err == nil {
					for _, n := range names {
						if n == args[1] {
							return fmt.Errorf("vector index %q: %w", n, kvstore.ErrExists)
						}
					}
				}
				ix, err := vector.Open(cmd.Context(), db, args[1], vector.Options{Dim: f.dim, Metric: m, Storage: s})
				if err != nil {
					return vecError(args[1], err)
				}
				return ix.Close()
			})
		}}
	create.Flags().IntVar(&f.dim, "dim", 0, "vector dimension `N`")
	create.Flags().StringVar(&f.metric, "metric", "l2", "distance: l2, cosine or dot")
	create.Flags().StringVar(&f.storage, "storage", "f32", "in-memory form: f32, f16 or int8")
	drop := &cobra.Command{Use: "drop FILE INDEX", Short: "Delete a vector index with all its vectors", Args: nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(args[0], true, func(db *kvstore.Store) error {
				return vecError(args[1], vector.Drop(cmd.Context(), db, args[1]))
			})
		}}
	put := &cobra.Command{Use: "put FILE INDEX KEY (--vector JSON | --vector-file F) [--ttl D] [--meta k=v]... [--value V]", Short: "Store a vector under a key", Args: nargs(3, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			exp, err := a.expiryFlags(cmd, nil, f.ttl, f.at)
			if err != nil {
				return err
			}
			meta, err := pairs(f.meta, "--meta")
			if err != nil {
				return err
			}
			in := a.inputs()
			key, err := in.arg("KEY", args[2])
			if err != nil {
				return err
			}
			p := vector.Put{TTL: exp.ttl, ExpireAt: exp.at, Meta: meta}
			if v := cmd.Flags().Lookup("value"); v.Changed {
				if p.Value, err = in.arg("VALUE", v.Value.String()); err != nil {
					return err
				}
			}
			if f.vecFile == "-" && in.stdinUsed {
				return usagef("stdin ('-') can be read only once: give the key or value another way")
			}
			vec, err := a.vecInput(f, nil, "")
			if err != nil {
				return err
			}
			return a.withIndex(cmd, args[0], args[1], true, func(db *kvstore.Store, ix *vector.Index) error {
				return vecError(args[1], ix.Put(cmd.Context(), key, vec, p))
			})
		}}
	put.Flags().String("value", "", "a `VALUE` stored with the vector ('-': stdin; --hex, --base64 decode it)")
	get := &cobra.Command{Use: "get FILE INDEX KEY...", Short: "Print the vectors, values and metadata of keys (read-only)", Args: nargs(3, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			keys, err := a.keyArgs(args[2:])
			if err != nil {
				return err
			}
			return a.withIndex(cmd, args[0], args[1], false, func(db *kvstore.Store, ix *vector.Index) error {
				var missing []string
				err := db.View(cmd.Context(), func(tx *kvstore.Tx) error {
					w := ix.In(tx)
					for _, k := range keys {
						e, err := w.Get(k)
						if errors.Is(err, kvstore.ErrNotFound) && !errors.Is(err, vector.ErrNoIndex) {
							missing = append(missing, fmt.Sprintf("%q", showText(k)))
							continue
						} else if err != nil {
							return err
						}
						if err := a.emit(entryLine(e)); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					return vecError(args[1], err)
				}
				return vecMissing(args[1], missing, len(keys), "")
			})
		}}
	del := &cobra.Command{Use: "del FILE INDEX KEY...", Short: "Delete the vectors of keys", Args: nargs(3, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			keys, err := a.keyArgs(args[2:])
			if err != nil {
				return err
			}
			return a.withIndex(cmd, args[0], args[1], true, func(db *kvstore.Store, ix *vector.Index) error {
				var missing []string
				err := db.Update(cmd.Context(), func(tx *kvstore.Tx) error {
					missing = nil
					w := ix.In(tx)
					for _, k := range keys {
						err := w.Delete(k)
						if errors.Is(err, kvstore.ErrNotFound) && !errors.Is(err, vector.ErrNoIndex) {
							missing = append(missing, fmt.Sprintf("%q", showText(k))) // an expired key is deleted all the same
						} else if err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					return vecError(args[1], err)
				}
				others := ""
				switch deleted := len(keys) - len(missing); {
				case deleted == 0:
					others = " (none was deleted)"
				case deleted == 1:
					others = " (the other one was deleted)"
				default:
					others = fmt.Sprintf(" (the other %d were deleted)", deleted)
				}
				return vecMissing(args[1], missing, len(keys), others)
			})
		}}
	search := &cobra.Command{Use: "search FILE INDEX (--vector JSON | --vector-file F | --like KEY) [-k N] [--ef N] [--prefix P] [--where k=v]...", Short: "Print the nearest vectors (read-only)", Args: nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			where, err := pairs(f.where, "--where")
			if err != nil {
				return err
			}
			switch {
			case f.k < 1:
				return usagef("-k %d: the number of results must be at least 1", f.k)
			case f.ef < 0:
				return usagef("--ef %d: the candidate list must be positive (0: the index's)", f.ef)
			case !(f.maxDist >= 0) || f.maxDist > math.MaxFloat32:
				return usagef("--max-distance %v: want a distance from 0 (no limit) up", f.maxDist)
			}
			return a.withIndex(cmd, args[0], args[1], false, func(db *kvstore.Store, ix *vector.Index) error {
				q, err := a.vecInput(f, ix, args[1])
				if err != nil {
					return err
				}
				hits, err := ix.Search(cmd.Context(), q, vector.Query{K: f.k, Ef: f.ef, Prefix: []byte(f.prefix), Where: where,
					MaxDistance: float32(f.maxDist), Values: f.values})
				if err != nil {
					return vecError(args[1], err)
				}
				head := []string{"KEY", "DISTANCE"}
				if f.values {
					head = append(head, "META", "VALUE")
				}
				t := a.rows(false, head...)
				for _, h := range hits {
					if a.json {
						e := vector.Entry{Key: h.Key}
						if f.values {
							e.Value, e.Meta = h.Value, h.Meta
						}
						if err := a.emit(struct {
							vecLine
							Distance float32 `json:"distance"`
						}{entryLine(e), h.Distance}); err != nil {
							return err
						}
						continue
					}
					row := []cell{bin(h.Key), txt(strconv.FormatFloat(float64(h.Distance), 'g', 6, 32))}
					if f.values {
						row = append(row, bin([]byte(metaText(h.Meta))), bin(h.Value))
					}
					if err := t.row(row...); err != nil {
						return err
					}
				}
				if a.json {
					return nil
				}
				return t.flush()
			})
		}}
	for _, sc := range []*cobra.Command{put, search} {
		sc.Flags().StringVar(&f.vec, "vector", "", "the vector as a JSON array")
		sc.Flags().StringVar(&f.vecFile, "vector-file", "", "read the vector (a JSON array) from `FILE` ('-': stdin)")
	}
	put.Flags().StringVar(&f.ttl, "ttl", "", "expire the vector after `DURATION` (90s, 30m, 2h, 7d)")
	put.Flags().StringVar(&f.at, "expire-at", "", "expire the vector at `TIME` (RFC 3339)")
	put.Flags().StringArrayVar(&f.meta, "meta", nil, "metadata pair `k=v` (repeatable)")
	search.Flags().StringVar(&f.like, "like", "", "search with the vector of `KEY`")
	search.Flags().IntVarP(&f.k, "k", "k", 10, "results `N`")
	search.Flags().IntVar(&f.ef, "ef", 0, "search candidate list (default: the index's, 128)")
	search.Flags().StringVar(&f.prefix, "prefix", "", "keep keys with this prefix")
	search.Flags().StringArrayVar(&f.where, "where", nil, "keep vectors with metadata `k=v` (repeatable)")
	search.Flags().Float64Var(&f.maxDist, "max-distance", 0, "drop results farther than this")
	search.Flags().BoolVar(&f.values, "values", false, "show values and metadata")
	check := &cobra.Command{Use: "check FILE", Short: "Check every vector index's rows (read-only; also part of 'snkv check')", Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(args[0], false, func(db *kvstore.Store) error {
				rep, err := db.CheckIntegrity(cmd.Context())
				if err != nil {
					return err
				}
				var problems []string
				for _, p := range rep.Problems {
					if strings.HasPrefix(p, "vector index ") {
						problems = append(problems, p)
					}
				}
				for _, p := range problems {
					fmt.Fprintln(a.out, p)
				}
				if len(problems) > 0 {
					return damagedError{err: fmt.Errorf("%d problems in vector indexes (run 'snkv vec rebuild')", len(problems))}
				}
				fmt.Fprintln(a.out, "ok")
				return nil
			})
		}}
	rebuild := &cobra.Command{Use: "rebuild FILE", Short: "Rebuild damaged graph rows of every vector index (part of 'snkv repair')", Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(args[0], true, func(db *kvstore.Store) error {
				fixed, err := db.Repair(cmd.Context())
				for _, l := range fixed {
					fmt.Fprintln(a.out, l)
				}
				return err
			})
		}}
	for _, sc := range []*cobra.Command{takes(ls, "json,escape"), takes(stats, "json"), takes(create, ""), takes(drop, ""),
		takes(put, "hex,base64"), takes(get, "json,hex,base64,escape"), takes(del, "hex,base64"),
		takes(search, "json,escape"), takes(check, ""), takes(rebuild, "")} {
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

func parseVecKinds(metric, storage string) (vector.Metric, vector.Storage, error) {
	var m vector.Metric
	var s vector.Storage
	switch metric {
	case "l2":
	case "cosine":
		m = vector.Cosine
	case "dot":
		m = vector.Dot
	default:
		return 0, 0, usagef("--metric %q: l2, cosine or dot", metric)
	}
	switch storage {
	case "f32":
	case "f16":
		s = vector.F16
	case "int8":
		s = vector.Int8
	default:
		return 0, 0, usagef("--storage %q: f32, f16 or int8", storage)
	}
	return m, s, nil
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

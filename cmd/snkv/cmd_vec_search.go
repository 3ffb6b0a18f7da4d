package main

import (
	"math"
	"strconv"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/spf13/cobra"
)

func (a *app) vecSearchCommand(f *vecFlags) *cobra.Command {
	c := &cobra.Command{Use: "search FILE INDEX (--vector JSON | --vector-file F | --like KEY) [-k N] [--ef N] [--prefix P] [--where k=v]...", Short: "Print the nearest vectors (read-only)", Args: nargs(2, 2),
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
				q, err := a.vecInput(*f, ix, args[1])
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
	c.Flags().StringVar(&f.vec, "vector", "", "the vector as a JSON array")
	c.Flags().StringVar(&f.vecFile, "vector-file", "", "read the vector (a JSON array) from `FILE` ('-': stdin)")
	c.Flags().StringVar(&f.like, "like", "", "search with the vector of `KEY`")
	c.Flags().IntVarP(&f.k, "k", "k", 10, "results `N`")
	c.Flags().IntVar(&f.ef, "ef", 0, "search candidate list (default: the index's, 128)")
	c.Flags().StringVar(&f.prefix, "prefix", "", "keep keys with this prefix")
	c.Flags().StringArrayVar(&f.where, "where", nil, "keep vectors with metadata `k=v` (repeatable)")
	c.Flags().Float64Var(&f.maxDist, "max-distance", 0, "drop results farther than this")
	c.Flags().BoolVar(&f.values, "values", false, "show values and metadata")
	return c
}

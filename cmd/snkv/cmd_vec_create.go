package main

import (
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/spf13/cobra"
)

func (a *app) vecCreateCommand(f *vecFlags) *cobra.Command {
	c := &cobra.Command{Use: "create FILE INDEX --dim N [--metric l2|cosine|dot] [--storage f32|f16|int8]", Short: "Create a vector index", Args: nargs(2, 2),
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
	c.Flags().IntVar(&f.dim, "dim", 0, "vector dimension `N`")
	c.Flags().StringVar(&f.metric, "metric", "l2", "distance: l2, cosine or dot")
	c.Flags().StringVar(&f.storage, "storage", "f32", "in-memory form: f32, f16 or int8")
	return c
}

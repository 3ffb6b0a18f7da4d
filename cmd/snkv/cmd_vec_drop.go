package main

import (
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/spf13/cobra"
)

func (a *app) vecDropCommand() *cobra.Command {
	c := &cobra.Command{Use: "drop FILE INDEX", Short: "Delete a vector index with all its vectors", Args: nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(args[0], true, func(db *kvstore.Store) error {
				return vecError(args[1], vector.Drop(cmd.Context(), db, args[1]))
			})
		}}
	return c
}

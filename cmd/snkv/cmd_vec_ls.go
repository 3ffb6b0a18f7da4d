package main

import (
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/spf13/cobra"
)

func (a *app) vecLsCommand() *cobra.Command {
	c := &cobra.Command{Use: "ls FILE", Short: "List the vector indexes with their dimension, metric and count (read-only)", Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(args[0], false, func(db *kvstore.Store) error {
				names, err := vector.List(cmd.Context(), db)
				if err != nil {
					return err
				}
				return a.vecStats(cmd, db, names)
			})
		}}
	return c
}

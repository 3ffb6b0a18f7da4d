package main

import (
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/spf13/cobra"
)

func (a *app) vecStatsCommand() *cobra.Command {
	c := &cobra.Command{Use: "stats FILE [INDEX]", Short: "Show an index's figures (read-only)", Args: nargs(1, 2),
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
	return c
}

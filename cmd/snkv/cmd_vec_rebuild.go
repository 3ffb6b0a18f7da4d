package main

import (
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) vecRebuildCommand() *cobra.Command {
	c := &cobra.Command{Use: "rebuild FILE", Short: "Rebuild damaged graph rows of every vector index (part of 'snkv repair')", Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(args[0], true, func(db *kvstore.Store) error {
				fixed, err := db.Repair(cmd.Context())
				for _, l := range fixed {
					fmt.Fprintln(a.out, l)
				}
				return err
			})
		}}
	return c
}

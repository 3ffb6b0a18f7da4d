package main

import (
	"fmt"
	"strings"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) vecCheckCommand() *cobra.Command {
	c := &cobra.Command{Use: "check FILE", Short: "Check every vector index's rows (read-only; also part of 'snkv check')", Args: nargs(1, 1),
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
	return c
}

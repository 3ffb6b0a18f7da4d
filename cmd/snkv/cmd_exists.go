package main

import (
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) existsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "exists FILE KEY",
		Short: "Tell whether a key exists (read-only)",
		Long: `Print true or false: whether KEY exists (and has not expired) in the column
family of --cf. The exit code says it too: 0 if it exists, 3 if not.`,
		Example: `  snkv exists app.db user:1 && echo present`,
		Args:    nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.onKey(args, false, func(cf *kvstore.ColumnFamily, key []byte) error {
				ok, err := cf.Exists(key)
				if err != nil {
					return keyError(cf, key, err)
				}
				if a.json {
					r := newRecord(cf.Name(), key, nil)
					err = a.emit(struct {
						record
						Exists bool `json:"exists"`
					}{r, ok})
				} else {
					_, err = fmt.Fprintln(a.out, ok)
				}
				if err == nil && !ok {
					return silentExit{exitNotFound}
				}
				return err
			})
		},
	}
}

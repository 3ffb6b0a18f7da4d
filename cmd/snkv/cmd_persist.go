package main

import (
	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) persistCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "persist FILE KEY",
		Short:   "Remove the TTL of a key, making it permanent",
		Long:    `Remove the TTL of KEY. A key without TTL stays as it is. Exit code 3 if the key does not exist.`,
		Example: `  snkv persist app.db --cf sessions tok123`,
		Args:    nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.onKey(args, true, func(cf *kvstore.ColumnFamily, key []byte) error {
				if err := cf.Persist(key); err != nil {
					return keyError(cf, key, err)
				}
				if a.json {
					return a.emit(newRecord(cf.Name(), key, nil))
				}
				return nil
			})
		},
	}
}

package main

import (
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) ttlCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "ttl FILE KEY",
		Short: "Print the time a key has left, or \"permanent\" (read-only)",
		Long: `Print the time KEY has left before it expires (millisecond precision), or
"permanent" for a key without TTL. --json adds the absolute expiry in
milliseconds since the Unix epoch. Exit code 3 if the key does not exist.`,
		Example: `  snkv ttl app.db --cf sessions tok123`,
		Args:    nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.onKey(args, false, func(cf *kvstore.ColumnFamily, key []byte) error {
				d, err := cf.TTL(key)
				if err != nil {
					return keyError(cf, key, err)
				}
				if a.json {
					r := newRecord(cf.Name(), key, nil)
					a.setTTL(&r, d)
					return a.emit(struct {
						record
						Permanent bool `json:"permanent"`
					}{r, d == kvstore.NoTTL})
				}
				_, err = fmt.Fprintln(a.out, formatTTL(d, d == kvstore.NoTTL))
				return err
			})
		},
	}
}

package main

import (
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) upgradeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "upgrade FILE",
		Short: "Convert a store to the current format (checksums, STRICT tables, TTL expiry copies)",
		Long: `Convert a store to the current format in small transactions (other
programs may go on using it): a version-1 store gets checksums and STRICT
tables (format 2), and the column families that use TTL get the copy of
each key's expiry in its data row (format 3; each key's copy is written at
its next TTL write). Interrupted, it resumes when run again. Does nothing on
a current store.`,
		Example: `  snkv upgrade app.db`,
		Args:    nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(args[0], true, func(db *kvstore.Store) error {
				from, err := db.FormatVersion(cmd.Context())
				if err != nil {
					return err
				}
				bar := a.progress(-1, "upgrading", "")
				err = db.Upgrade(cmd.Context())
				bar.done()
				if err != nil {
					return err
				}
				to, err := db.FormatVersion(cmd.Context())
				if err != nil {
					return err
				}
				if a.json {
					return a.emit(map[string]any{"from": from, "to": to, "current": true})
				}
				if to == from {
					_, err := fmt.Fprintf(a.out, "%s: the store is current (format %d): nothing to upgrade\n", args[0], from)
					return err
				}
				_, err = fmt.Fprintf(a.out, "format %d -> %d\n", from, to)
				return err
			})
		},
	}
}

package main

import (
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

// currentFormat is the format version Store.Upgrade converts to.
const currentFormat = 2

func (a *app) upgradeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "upgrade FILE",
		Short: "Convert a version-1 store to the current format (checksums, STRICT tables)",
		Long: `Convert a version-1 store to format 2 in small transactions (other
programs may go on using it). Interrupted, it resumes when run again. Does
nothing on a current store.`,
		Example: `  snkv upgrade app.db`,
		Args:    nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(args[0], true, func(db *kvstore.Store) error {
				from, err := db.FormatVersion(cmd.Context())
				if err != nil {
					return err
				}
				if from >= currentFormat {
					if a.json {
						return a.emit(map[string]any{"from": from, "to": from, "current": true})
					}
					_, err := fmt.Fprintf(a.out, "%s: the store is current (format %d): nothing to upgrade\n", args[0], from)
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
					return a.emit(map[string]any{"from": from, "to": to, "current": to >= currentFormat})
				}
				fmt.Fprintf(a.out, "format %d -> %d\n", from, to)
				return nil
			})
		},
	}
}

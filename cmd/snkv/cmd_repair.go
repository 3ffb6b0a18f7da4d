package main

import (
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) repairCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "repair FILE",
		Short: "Restore damaged hidden objects (views, triggers, TTL tables, catalog rows)",
		Long: `Mend what "snkv check" reports about hidden objects, in one transaction,
without deleting or changing a data row: put back lost catalog rows,
recreate views and triggers, rebuild a lost TTL table from the other one.
Rows whose checksum fails are not mended. Prints one line per repair.

An encrypted store needs no password or key for it (nothing repair
restores is sealed): given none, repair runs without unlocking the store.`,
		Example: `  snkv repair app.db`,
		Args:    nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			var done []string
			keyless := false
			a.onEncrypted = func() error {
				if flag, err := a.secret.given(); err != nil || flag != "" || a.secret.fromEnv() {
					return err // a secret was given: open with it
				}
				keyless = true
				var err error
				done, err = kvstore.RepairFile(cmd.Context(), path, a.options(false))
				if err != nil {
					return err
				}
				return errRepairedKeyless
			}
			err := a.withStore(path, true, func(db *kvstore.Store) error {
				var err error
				done, err = db.Repair(cmd.Context())
				return err
			})
			if keyless && errors.Is(err, errRepairedKeyless) {
				err = nil
			}
			if err != nil {
				return err
			}
			if a.json {
				if done == nil {
					done = []string{}
				}
				return a.emit(map[string]any{"repairs": done})
			}
			if len(done) == 0 {
				fmt.Fprintln(a.out, "nothing to repair")
			}
			for _, d := range done {
				fmt.Fprintln(a.out, d)
			}
			return nil
		},
	}
}

// errRepairedKeyless ends the open of an encrypted store that repair
// repaired without its secret.
var errRepairedKeyless = errors.New("repaired without the secret")

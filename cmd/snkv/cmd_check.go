package main

import (
	"fmt"
	"strings"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) checkCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "check FILE",
		Short: "Check the store's integrity: every row's checksum, hidden objects, TTL tables (read-only)",
		Long: `Run SQLite's integrity check on the whole file, then snkv's own checks:
every row's checksum and types, every column family's hidden objects (table,
view, triggers, TTL tables) with the definitions snkv wrote, and the
agreement of each column family's data, key index and expiry index. Prints
"ok" and how many rows it read, verified and found without a checksum
(written by another tool, or a version-1 store: not a problem), or the
problems found and exits 4 ("snkv repair" mends damaged hidden objects).`,
		Example: `  snkv check app.db`,
		Args:    nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a.checking = true
			return a.withStore(args[0], false, func(db *kvstore.Store) error {
				bar := a.progress(-1, "checking every row", "")
				rep, err := db.CheckIntegrity(cmd.Context())
				bar.done()
				if interrupted(cmd.Context(), err) {
					return interruptedf("interrupted: the check did not finish (it changes nothing)")
				}
				if err != nil {
					return err
				}
				ok := len(rep.Problems) == 0
				if a.json {
					r := map[string]any{"ok": ok, "rows": rep.Rows, "verified": rep.Verified, "unverified": rep.Unverified}
					if !ok {
						r["problems"] = strings.Join(rep.Problems, "; ")
					}
					if jerr := a.emit(r); jerr != nil {
						return jerr
					}
				} else if ok {
					fmt.Fprintf(a.out, "ok: %s, %d verified, %d unverified\n", countOf(rep.Rows, "row"), rep.Verified, rep.Unverified)
				}
				if !ok {
					return damagedError{err: fmt.Errorf("%s: check failed: %s:\n  %s", args[0], countOf(len(rep.Problems), "problem"), strings.Join(rep.Problems, "\n  "))}
				}
				return nil
			})
		},
	}
}

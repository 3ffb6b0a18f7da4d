package main

import (
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) countCommand() *cobra.Command {
	var sel keyRange
	c := &cobra.Command{
		Use:   "count FILE",
		Short: "Count the live keys, all or those selected (read-only)",
		Long: `Print the number of live keys of the column family of --cf: all of them,
or those selected by --prefix, --start/--end and --match (as scan selects
them). Without a selection the count comes from the store's counters;
with one, the keys are read (not their values) from one snapshot.`,
		Example: `  snkv count app.db
  snkv count app.db --prefix user:
  snkv count app.db --cf sessions --match 'tok-*' --json`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ks, err := a.selection(cmd, sel)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			return a.withCF(args[0], false, func(db *kvstore.Store, cf *kvstore.ColumnFamily) error {
				var n int64
				if !ks.any() {
					kc, err := db.CountKeys(ctx, cf.Name())
					if err != nil {
						return err
					}
					n = kc.Live
				} else {
					ks.opts.Borrow = true
					err = db.View(ctx, func(tx *kvstore.Tx) error {
						for e, err := range tx.CF(cf).Scan(ks.opts) {
							if err != nil {
								return err
							}
							if ks.keeps(e.Key) {
								n++
							}
							if n%ctxCheckEvery == 0 {
								if err := ctx.Err(); err != nil {
									return err
								}
							}
						}
						return nil
					})
					if err = readError(db, cf.Name(), err); err != nil {
						return err
					}
				}
				if a.json {
					return a.emit(map[string]any{"cf": cf.Name(), "keys": n})
				}
				_, err = fmt.Fprintln(a.out, n)
				return err
			})
		},
	}
	sel.add(c)
	return c
}

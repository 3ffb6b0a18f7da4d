package main

import (
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

// purgeChunk is how many expired keys purge removes between progress
// updates; the library commits every 256 keys and checks for cancellation
// between those batches.
const purgeChunk = 4096

func (a *app) purgeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "purge FILE",
		Short: "Remove expired keys (all column families, or --cf)",
		Long: `Remove the keys whose TTL has passed from every column family, or only
from the one named by --cf. Expired keys are invisible to reads already; a
purge gives their space back. It commits every 256 keys: Ctrl-C stops it at
the next batch boundary, reports what was removed, and leaves the store
consistent.`,
		Example: `  snkv purge app.db
  snkv purge app.db --cf sessions --json`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return a.withStore(args[0], true, func(db *kvstore.Store) error {
				names := []string{a.cf}
				if !cfChanged(cmd) {
					var err error
					if names, err = db.ListColumnFamilies(); err != nil {
						return err
					}
				}
				type job struct {
					cf      *kvstore.ColumnFamily
					expired int64
				}
				var jobs []job
				var todo int64
				cfs, counts, err := openCounted(ctx, db, names)
				if err != nil {
					return err
				}
				for i, kc := range counts {
					jobs = append(jobs, job{cfs[i], kc.Expired})
					todo += kc.Expired
				}
				bar := a.progress(todo, "purging", "keys")
				t := a.table("COLUMN FAMILY", "PURGED")
				var total int64
				var runErr error
				for _, j := range jobs {
					var purged int64
					for {
						n, err := j.cf.PurgeExpiredN(ctx, purgeChunk)
						purged += int64(n)
						bar.add(n)
						if err != nil {
							runErr = err
							break
						}
						if n < purgeChunk {
							break
						}
					}
					total += purged
					if a.json {
						if err := a.emit(map[string]any{"cf": j.cf.Name(), "purged": purged}); err != nil {
							return err
						}
					} else {
						t.row(a.showCell([]byte(j.cf.Name()), false), itoa(purged))
					}
					if runErr != nil {
						break
					}
				}
				bar.done()
				if !a.json {
					t.row("total", itoa(total))
					if err := t.flush(); err != nil {
						return err
					}
				}
				if runErr != nil && interrupted(ctx, runErr) {
					return fmt.Errorf("interrupted: purged %s before stopping at a batch boundary; the store is consistent", countOf(total, "expired key"))
				}
				return runErr
			})
		},
	}
}

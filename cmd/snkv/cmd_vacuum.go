package main

import (
	"os"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) vacuumCommand() *cobra.Command {
	var incremental int
	c := &cobra.Command{
		Use:   "vacuum FILE",
		Short: "Give free pages back to the file system",
		Long: `Rebuild the file compactly (SQLite's VACUUM: needs free disk space of about
the file's size and holds the write lock throughout). --incremental N only
returns up to N free pages (0: all), which is quick and works on files
created by snkv.`,
		Example: `  snkv vacuum app.db
  snkv vacuum app.db --incremental 0`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if incremental < -1 {
				return usagef("--incremental must be 0 or more")
			}
			return a.withStore(args[0], true, func(db *kvstore.Store) error {
				before, err := fileSize(args[0])
				if err != nil {
					return err
				}
				bar := a.progress(-1, "vacuuming", "")
				if incremental >= 0 {
					err = db.IncrementalVacuum(ctx, incremental)
				} else {
					err = db.Vacuum(ctx)
				}
				bar.done()
				if err != nil {
					return err
				}
				if _, err := db.Checkpoint(ctx, kvstore.CheckpointTruncate); err != nil {
					return err
				}
				after, err := fileSize(args[0])
				if err != nil {
					return err
				}
				if a.json {
					return a.emit(map[string]any{"size_before": before, "size_after": after})
				}
				t := a.table("SIZE BEFORE", "SIZE AFTER")
				t.row(withSize(before), withSize(after))
				return t.flush()
			})
		},
	}
	c.Flags().IntVar(&incremental, "incremental", -1, "return only up to `N` free pages (0: all) instead of rebuilding")
	return c
}

// fileSize is the size of the file at path.
func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

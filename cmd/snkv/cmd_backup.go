package main

import (
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) backupCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "backup FILE DEST",
		Short: "Write a consistent copy of the store to a new file (read-only)",
		Long: `Write a compact, consistent copy of the store, as of one snapshot, to the new
file DEST (which must not exist). The store is opened read-only, and an
application writing to it meanwhile is not held up. The copy of an
encrypted store is encrypted as the store is, and opens with the same
password or key (opening the store to copy it needs that secret too).`,
		Example: `  snkv backup app.db /backups/app-2030-01-01.db`,
		Args:    nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := dirExists(args[1]); err != nil {
				return fmt.Errorf("%s: cannot write the backup: %w", args[1], err)
			}
			return a.withStore(args[0], false, func(db *kvstore.Store) error {
				bar := a.progress(-1, "backing up", "")
				err := db.Backup(cmd.Context(), args[1])
				bar.done()
				if errors.Is(err, kvstore.ErrExists) {
					return fmt.Errorf("%s: the backup destination already exists", args[1])
				}
				if err != nil {
					return err
				}
				size, err := fileSize(args[1])
				if err != nil {
					return err
				}
				if a.json {
					return a.emit(map[string]any{"dest": args[1], "size": size})
				}
				t := a.table("DEST", "SIZE")
				t.row(args[1], withSize(size))
				return t.flush()
			})
		},
	}
}

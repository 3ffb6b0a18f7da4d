package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) delCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "del FILE KEY...",
		Aliases: []string{"delete", "rm"},
		Short:   "Delete one or more keys",
		Long: `Delete the KEYs from the column family of --cf, all in one transaction.
Exit code 3 if a key does not exist: the others are deleted all the same,
and the message names the missing ones.`,
		Example: `  snkv del app.db user:1
  snkv del app.db --cf sessions tok1 tok2 tok3`,
		Args: nargs(2, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			keys, err := a.keyArgs(args[1:])
			if err != nil {
				return err
			}
			return a.withCF(args[0], true, func(db *kvstore.Store, cf *kvstore.ColumnFamily) error {
				var missing []string
				var deleted [][]byte
				err = db.Update(cmd.Context(), func(tx *kvstore.Tx) error {
					missing, deleted = nil, nil
					h := tx.CF(cf)
					for _, key := range keys {
						err := h.Delete(key)
						switch {
						case errors.Is(err, kvstore.ErrNotFound):
							missing = append(missing, fmt.Sprintf("%q", showText(key)))
						case err != nil:
							return keyError(cf, key, err)
						default:
							deleted = append(deleted, key)
						}
					}
					return nil
				})
				if err != nil {
					return err
				}
				if a.json {
					for _, key := range deleted {
						if err := a.emit(newRecord(cf.Name(), key, nil)); err != nil {
							return err
						}
					}
				}
				switch {
				case len(missing) == 0:
					return nil
				case len(keys) == 1:
					return keyError(cf, keys[0], kvstore.ErrNotFound)
				}
				others := fmt.Sprintf("the other %d were deleted", len(deleted))
				switch len(deleted) {
				case 0:
					others = "none was deleted"
				case 1:
					others = "the other one was deleted"
				}
				return notFound{fmt.Sprintf("%d of %d keys not found in column family %q: %s (%s)",
					len(missing), len(keys), cf.Name(), strings.Join(missing, ", "), others)}
			})
		},
	}
}

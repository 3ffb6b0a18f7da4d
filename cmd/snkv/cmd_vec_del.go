package main

import (
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/spf13/cobra"
)

func (a *app) vecDelCommand() *cobra.Command {
	c := &cobra.Command{Use: "del FILE INDEX KEY...", Short: "Delete the vectors of keys", Args: nargs(3, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			keys, err := a.keyArgs(args[2:])
			if err != nil {
				return err
			}
			return a.withIndex(cmd, args[0], args[1], true, func(db *kvstore.Store, ix *vector.Index) error {
				var missing []string
				err := db.Update(cmd.Context(), func(tx *kvstore.Tx) error {
					missing = nil
					w := ix.In(tx)
					for _, k := range keys {
						err := w.Delete(k)
						if errors.Is(err, kvstore.ErrNotFound) && !errors.Is(err, vector.ErrNoIndex) {
							missing = append(missing, fmt.Sprintf("%q", showText(k))) // an expired key is deleted all the same
						} else if err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					return vecError(args[1], err)
				}
				others := ""
				switch deleted := len(keys) - len(missing); {
				case deleted == 0:
					others = " (none was deleted)"
				case deleted == 1:
					others = " (the other one was deleted)"
				default:
					others = fmt.Sprintf(" (the other %d were deleted)", deleted)
				}
				return vecMissing(args[1], missing, len(keys), others)
			})
		}}
	return c
}

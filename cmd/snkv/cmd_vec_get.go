package main

import (
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/spf13/cobra"
)

func (a *app) vecGetCommand() *cobra.Command {
	c := &cobra.Command{Use: "get FILE INDEX KEY...", Short: "Print the vectors, values and metadata of keys (read-only)", Args: nargs(3, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			keys, err := a.keyArgs(args[2:])
			if err != nil {
				return err
			}
			return a.withIndex(cmd, args[0], args[1], false, func(db *kvstore.Store, ix *vector.Index) error {
				var missing []string
				err := db.View(cmd.Context(), func(tx *kvstore.Tx) error {
					w := ix.In(tx)
					for _, k := range keys {
						e, err := w.Get(k)
						if errors.Is(err, kvstore.ErrNotFound) && !errors.Is(err, vector.ErrNoIndex) {
							missing = append(missing, fmt.Sprintf("%q", showText(k)))
							continue
						} else if err != nil {
							return err
						}
						if err := a.emit(entryLine(e)); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					return vecError(args[1], err)
				}
				return vecMissing(args[1], missing, len(keys), "")
			})
		}}
	return c
}

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
			// An expired key is deleted all the same.
			del := func(w *vector.Tx, k []byte) error { return w.Delete(k) }
			return a.eachVecKey(cmd, args, true, del, func(n int, missing []string) error {
				others := ""
				switch deleted := n - len(missing); {
				case deleted == 0:
					others = " (none was deleted)"
				case deleted == 1:
					others = " (the other one was deleted)"
				default:
					others = fmt.Sprintf(" (the other %d were deleted)", deleted)
				}
				return vecMissing(args[1], missing, n, others)
			})
		}}
	return c
}

// eachVecKey runs do on each KEY of the arguments FILE INDEX KEY..., in
// one transaction (a write transaction when write), and then report with
// the number of keys and those do found missing (an index that is missing
// is an error).
func (a *app) eachVecKey(cmd *cobra.Command, args []string, write bool, do func(w *vector.Tx, k []byte) error, report func(n int, missing []string) error) error {
	keys, err := a.keyArgs(args[2:])
	if err != nil {
		return err
	}
	return a.withIndex(cmd, args[0], args[1], write, func(db *kvstore.Store, ix *vector.Index) error {
		run := db.View
		if write {
			run = db.Update
		}
		var missing []string
		err := run(cmd.Context(), func(tx *kvstore.Tx) error {
			missing = nil
			w := ix.In(tx)
			for _, k := range keys {
				err := do(w, k)
				if errors.Is(err, kvstore.ErrNotFound) && !errors.Is(err, vector.ErrNoIndex) {
					missing = append(missing, fmt.Sprintf("%q", showText(k)))
				} else if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return vecError(args[1], err)
		}
		return report(len(keys), missing)
	})
}

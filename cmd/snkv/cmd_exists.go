package main

import (
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) existsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "exists FILE KEY...",
		Short: "Tell whether keys exist (read-only)",
		Long: `Print true or false: whether KEY exists (and has not expired) in the column
family of --cf. The exit code says it too: 0 if it exists, 3 if not.

With several keys, one read answers for all of them, from one snapshot: a
table KEY EXISTS (--no-header leaves out its header), or with --json one
object per key; the exit code is 0 if every key exists, 3 if one does not.`,
		Example: `  snkv exists app.db user:1 && echo present
  snkv exists app.db user:1 user:2 user:3`,
		Args: nargs(2, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			keys, err := a.keyArgs(args[1:])
			if err != nil {
				return err
			}
			return a.withCF(args[0], false, func(db *kvstore.Store, cf *kvstore.ColumnFamily) error {
				var t *rowWriter
				if !a.json && len(keys) > 1 {
					t = a.rows(false, "KEY", "EXISTS")
				}
				all := true
				err := db.View(cmd.Context(), func(tx *kvstore.Tx) error {
					h := tx.CF(cf)
					for _, key := range keys {
						ok, err := h.Exists(key)
						if err != nil {
							return keyError(cf, key, err)
						}
						all = all && ok
						switch {
						case a.json:
							err = a.emit(struct {
								record
								Exists bool `json:"exists"`
							}{newRecord(cf.Name(), key, nil), ok})
						case t != nil:
							err = t.row(bin(key), txt(fmt.Sprint(ok)))
						default:
							_, err = fmt.Fprintln(a.out, ok)
						}
						if err != nil {
							return err
						}
					}
					return nil
				})
				if t != nil {
					if ferr := t.flush(); err == nil {
						err = ferr
					}
				}
				if err == nil && !all {
					return silentExit{exitNotFound}
				}
				return err
			})
		},
	}
}

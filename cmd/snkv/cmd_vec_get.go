package main

import (
	"github.com/snkv-go/snkv/vector"
	"github.com/spf13/cobra"
)

func (a *app) vecGetCommand() *cobra.Command {
	c := &cobra.Command{Use: "get FILE INDEX KEY...", Short: "Print the vectors, values and metadata of keys (read-only)", Args: nargs(3, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			get := func(w *vector.Tx, k []byte) error {
				e, err := w.Get(k)
				if err != nil {
					return err
				}
				return a.emit(entryLine(e))
			}
			return a.eachVecKey(cmd, args, false, get, func(n int, missing []string) error {
				return vecMissing(args[1], missing, n, "")
			})
		}}
	return c
}

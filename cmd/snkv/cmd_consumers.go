package main

import (
	"encoding/hex"
	"strconv"
	"time"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) consumersCommand() *cobra.Command {
	var reset string
	c := &cobra.Command{
		Use:   "consumers FILE",
		Short: "List the change feed's named consumers, or forget one with --reset",
		Long: `List the named consumers of the change feed and their saved positions: the
next sequence each reads, the history (epoch) it was taken in, and when it
was saved. --reset NAME forgets that consumer's position (exit code 3 if it
has none): it starts again wherever its application starts a new consumer,
and no longer holds back the trimming of the history.`,
		Example: `  snkv consumers app.db
  snkv consumers app.db --json
  snkv consumers app.db --reset indexer`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			write := cmd.Flags().Changed("reset")
			return a.withStore(args[0], write, func(db *kvstore.Store) error {
				if write {
					if err := changefeed.Reset(ctx, db, reset); err != nil {
						return err
					}
					if a.json {
						return a.emit(map[string]string{"reset": reset})
					}
					return nil
				}
				cs, err := changefeed.Consumers(ctx, db)
				if err != nil {
					return err
				}
				if a.json {
					for _, c := range cs {
						err := a.emit(struct {
							Name      string `json:"name"`
							Seq       int64  `json:"seq"`
							Epoch     string `json:"epoch"`
							UpdatedMs int64  `json:"updated_ms"`
						}{c.Name, c.Pos.Seq, hex.EncodeToString(c.Pos.Epoch), c.Updated.UnixMilli()})
						if err != nil {
							return err
						}
					}
					return nil
				}
				t := a.table("NAME", "NEXT", "EPOCH", "UPDATED")
				for _, c := range cs {
					t.row(a.show([]byte(c.Name)), strconv.FormatInt(c.Pos.Seq, 10), hex.EncodeToString(c.Pos.Epoch), c.Updated.UTC().Format(time.RFC3339))
				}
				return t.flush()
			})
		},
	}
	c.Flags().StringVar(&reset, "reset", "", "forget consumer `NAME`'s saved position")
	return c
}

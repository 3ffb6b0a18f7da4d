package main

import (
	"fmt"
	"strings"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

func (a *app) checkpointCommand() *cobra.Command {
	var mode string
	c := &cobra.Command{
		Use:   "checkpoint FILE",
		Short: "Copy the write-ahead log into the database file",
		Long: `Copy the WAL (FILE-wal) into the database file. --mode passive (default)
copies what it can without waiting; full waits for writers; restart also
waits for readers; truncate then empties the -wal file. A checkpoint held up
by other connections reports busy.`,
		Example: `  snkv checkpoint app.db --mode truncate`,
		Args:    nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			modes := map[string]kvstore.CheckpointMode{
				"passive": kvstore.CheckpointPassive, "full": kvstore.CheckpointFull,
				"restart": kvstore.CheckpointRestart, "truncate": kvstore.CheckpointTruncate,
			}
			m, ok := modes[strings.ToLower(mode)]
			if !ok {
				return usagef("bad --mode %q: want passive, full, restart or truncate", mode)
			}
			return a.withStore(args[0], true, func(db *kvstore.Store) error {
				res, err := db.Checkpoint(cmd.Context(), m)
				if err != nil {
					return err
				}
				if a.json {
					return a.emit(map[string]any{"mode": strings.ToLower(m.String()), "busy": res.Busy, "wal_frames": res.WALFrames, "checkpointed": res.Checkpointed})
				}
				t := a.table("MODE", "BUSY", "WAL FRAMES", "CHECKPOINTED")
				t.row(strings.ToLower(m.String()), fmt.Sprint(res.Busy), itoa(res.WALFrames), itoa(res.Checkpointed))
				return t.flush()
			})
		},
	}
	c.Flags().StringVar(&mode, "mode", "passive", "checkpoint `MODE`: passive, full, restart or truncate")
	return c
}

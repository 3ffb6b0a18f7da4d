package main

import (
	"fmt"
	"math"

	"github.com/snkv-go/snkv/timelog"
	"github.com/spf13/cobra"
)

func (a *app) timelogDeleteBeforeCommand(f *timelogFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "delete-before FILE LOG T",
		Short: "Delete every record of a log with a timestamp before T",
		Long: `Delete the records of LOG with a timestamp before T (excluded), the way a
retention policy does: one range delete (a tombstone) that hides them at
once; 'snkv timelog compact' then removes them from the pages. T is an
integer, or an RFC 3339 time with --time-unit. Prints how many records it
deleted (--json: {"log","before","deleted"}).`,
		Example: `  snkv timelog delete-before app.db cpu 1700000000000
  snkv timelog delete-before app.db cpu --time-unit ms 2030-01-01T00:00:00Z`,
		Args: nargs(3, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			perSec, err := parseTimeUnit(f.unit)
			if err != nil {
				return err
			}
			cutoff, err := parseTimestamp("T", args[2], perSec)
			if err != nil {
				return err
			}
			var deleted int64
			err = a.withWritableLog(cmd.Context(), args[0], args[1], false, false, func(l *timelog.Log) error {
				if cutoff > math.MinInt64 {
					if deleted, err = l.CountRange(math.MinInt64, cutoff); err != nil {
						return err
					}
				}
				if err := l.DeleteBefore(cutoff); err != nil {
					return err
				}
				return l.Flush(cmd.Context())
			})
			if err != nil {
				return err
			}
			if a.json {
				return a.emit(map[string]any{"log": args[1], "before": cutoff, "deleted": deleted})
			}
			_, err = fmt.Fprintf(a.out, "deleted %s\n", countOf(deleted, "record"))
			return err
		},
	}
}

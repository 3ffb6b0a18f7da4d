package main

import (
	"github.com/snkv-go/snkv/timelog"
	"github.com/spf13/cobra"
)

func (a *app) timelogStatsCommand(f *timelogFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "stats FILE LOG",
		Short: "Show figures of one log (read-only)",
		Long: `Show the visible records of LOG, the records stored in pages (deleted ones
not yet compacted away included), its pages, the pages that overlap others
(compaction pending), its stored range deletes (tombstones), and its first
and last timestamps (in RFC 3339 too with --time-unit).`,
		Example: `  snkv timelog stats app.db cpu --time-unit ms`,
		Args:    nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			perSec, err := parseTimeUnit(f.unit)
			if err != nil {
				return err
			}
			return a.withLog(cmd.Context(), args[0], args[1], func(l *timelog.Log, s *timelog.Snapshot) error {
				sum, err := summarize(l, s)
				if err != nil {
					return err
				}
				if a.json {
					return a.emit(sum)
				}
				t := a.table()
				rows := [][2]string{
					{"log", a.show([]byte(sum.Log))},
					{"records", itoa(sum.Records)},
					{"stored records", itoa(sum.Stored)},
					{"pages", itoa(int64(sum.Pages))},
					{"overlapping pages", itoa(int64(sum.Overlapping))},
					{"tombstones", itoa(int64(sum.Tombstones))},
					{"first", optTs(sum.First)},
					{"last", optTs(sum.Last)},
				}
				if perSec > 0 && sum.First != nil {
					rows = append(rows,
						[2]string{"first time", orDash(formatTimestamp(*sum.First, perSec))},
						[2]string{"last time", orDash(formatTimestamp(*sum.Last, perSec))})
				}
				for _, r := range rows {
					t.row(r[0], r[1])
				}
				return t.flush()
			})
		},
	}
}

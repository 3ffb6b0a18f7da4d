package main

import (
	"fmt"
	"math"

	"github.com/snkv-go/snkv/timelog"
	"github.com/spf13/cobra"
)

func (a *app) timelogCountCommand(f *timelogFlags) *cobra.Command {
	c := &cobra.Command{
		Use:   "count FILE LOG",
		Short: "Count a log's records, all or in [--start, --end) (read-only)",
		Long: `Print the number of visible records of LOG, or of those with a timestamp
in [--start, --end) (either bound may be left out). Exact and delete-aware.`,
		Example: `  snkv timelog count app.db cpu
  snkv timelog count app.db cpu --start 1700000000000 --end 1700003600000
  snkv timelog count app.db cpu --time-unit ms --start 2023-11-14T22:13:20Z`,
		Args: nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			lo, hi, _, _, empty, err := f.bounds(cmd)
			if err != nil {
				return err
			}
			return a.withLog(cmd.Context(), args[0], args[1], func(l *timelog.Log, s *timelog.Snapshot) error {
				var n int64
				if !empty {
					if n, err = countInclusive(s, lo, hi); err != nil {
						return err
					}
				}
				if a.json {
					return a.emit(map[string]any{"log": l.Name(), "records": n})
				}
				_, err := fmt.Fprintln(a.out, n)
				return err
			})
		},
	}
	c.Flags().StringVar(&f.start, "start", "", "count from timestamp `T` (included)")
	c.Flags().StringVar(&f.end, "end", "", "count up to timestamp `T` (excluded)")
	return c
}

// countInclusive counts the records with lo <= ts <= hi (lo <= hi).
func countInclusive(s *timelog.Snapshot, lo, hi int64) (int64, error) {
	if hi < math.MaxInt64 {
		return s.CountRange(lo, hi+1)
	}
	all, err := s.Count()
	if err != nil || lo == math.MinInt64 {
		return all, err
	}
	before, err := s.CountRange(math.MinInt64, lo)
	return all - before, err
}

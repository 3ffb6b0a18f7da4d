package main

import (
	"github.com/snkv-go/snkv/timelog"
	"github.com/spf13/cobra"
)

func (a *app) timelogRangeCommand(f *timelogFlags) *cobra.Command {
	c := &cobra.Command{
		Use:   "range FILE LOG",
		Short: "List a log's records in [--start, --end) (read-only)",
		Long: `List the records of LOG with a timestamp in [--start, --end), in time order
(records with equal timestamps in the order they were appended); --reverse
lists them newest first, --limit stops after N. A bound left out is open.
One snapshot is read throughout. A values log shows each record's value
too (a VALUE column, escaped as scan escapes; "value" or "value_base64" in
JSON). Output streams: memory stays bounded however many records.`,
		Example: `  snkv timelog range app.db cpu --start 1700000000000 --end 1700000060000
  snkv timelog range app.db cpu --time-unit ms --start 2023-11-14T22:13:20Z --end 2023-11-14T22:14:20Z
  snkv timelog range app.db cpu --reverse --limit 5 --json`,
		Args: nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.limit < 0 {
				return usagef("--limit must not be negative")
			}
			lo, hi, _, _, empty, err := f.bounds(cmd)
			if err != nil {
				return err
			}
			perSec, err := parseTimeUnit(f.unit)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			return a.withLog(ctx, args[0], args[1], func(l *timelog.Log, s *timelog.Snapshot) error {
				out := a.recordWriter(l, perSec)
				n := 0
				err := func() error {
					if empty {
						return nil
					}
					for e, err := range entries(s, l.Values(), lo, hi, f.reverse) {
						if err != nil {
							return err
						}
						if err := out.write(e); err != nil {
							return err
						}
						if n++; f.limit > 0 && n >= f.limit {
							return nil
						}
						if n%ctxCheckEvery == 0 && ctx.Err() != nil {
							return ctx.Err()
						}
					}
					return nil
				}()
				return out.end(ctx, err, n)
			})
		},
	}
	c.Flags().StringVar(&f.start, "start", "", "from timestamp `T` (included; default: the first)")
	c.Flags().StringVar(&f.end, "end", "", "up to timestamp `T` (excluded; default: the last, included)")
	c.Flags().BoolVar(&f.reverse, "reverse", false, "newest first")
	c.Flags().IntVar(&f.limit, "limit", 0, "stop after `N` records (0: no limit)")
	return c
}

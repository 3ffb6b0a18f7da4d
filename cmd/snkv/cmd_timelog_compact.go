package main

import (
	"github.com/snkv-go/snkv/timelog"
	"github.com/spf13/cobra"
)

func (a *app) timelogCompactCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "compact FILE LOG",
		Short: "Merge a log's overlapping pages and drop its deleted records",
		Long: `Compact LOG fully: merge every group of overlapping pages into pages that do
not overlap, and remove the records that deletes hide, in small
transactions (an application reading the log meanwhile is not held up).
Prints the pages and stored records before and after. Ctrl-C stops between
two transactions; what was compacted stays compacted.`,
		Example: `  snkv timelog compact app.db cpu`,
		Args:    nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var before, after timelog.Stats
			err := a.withWritableLog(cmd.Context(), args[0], args[1], false, false, func(l *timelog.Log) error {
				before = l.Stats()
				bar := a.progress(-1, "compacting", "")
				defer bar.done()
				l.Compact()
				for {
					did, err := l.MaintStep(ctx)
					if err != nil {
						if interrupted(ctx, err) {
							return interruptedf("interrupted: the log is partly compacted, and whole")
						}
						return err
					}
					if !did {
						break
					}
				}
				after = l.Stats()
				return nil
			})
			if err != nil {
				return err
			}
			if a.json {
				return a.emit(map[string]any{"log": args[1], "pages_before": before.Pages, "pages_after": after.Pages,
					"stored_before": before.StoredRecords, "stored_after": after.StoredRecords})
			}
			t := a.table("", "BEFORE", "AFTER")
			t.row("pages", itoa(int64(before.Pages)), itoa(int64(after.Pages)))
			t.row("stored records", itoa(before.StoredRecords), itoa(after.StoredRecords))
			return t.flush()
		},
	}
}

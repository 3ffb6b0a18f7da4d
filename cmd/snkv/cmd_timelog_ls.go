package main

import (
	"context"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
	"github.com/spf13/cobra"
)

// logSummary is what ls and stats show of one log.
type logSummary struct {
	Log         string `json:"log"`
	Records     int64  `json:"records"`     // visible records
	Stored      int64  `json:"stored"`      // records in stored pages, deleted ones not yet compacted away included
	Pages       int    `json:"pages"`       // stored pages
	Tombstones  int    `json:"tombstones"`  // stored range deletes
	Overlapping int    `json:"overlapping"` // pages in groups of overlapping pages (compaction pending)
	First       *int64 `json:"first,omitempty"`
	Last        *int64 `json:"last,omitempty"`
}

// summarize reads what ls and stats show of a log from one snapshot.
func summarize(l *timelog.Log, s *timelog.Snapshot) (logSummary, error) {
	n, err := s.Count()
	if err != nil {
		return logSummary{}, err
	}
	// Stats reads the durable state the snapshot loaded.
	st := l.Stats()
	sum := logSummary{Log: l.Name(), Records: n, Stored: st.StoredRecords, Pages: st.Pages,
		Tombstones: st.Tombstones, Overlapping: st.Overlapping}
	if r, ok, err := s.Min(); err != nil {
		return sum, err
	} else if ok {
		sum.First = &r.Ts
	}
	if r, ok, err := s.Max(); err != nil {
		return sum, err
	} else if ok {
		sum.Last = &r.Ts
	}
	return sum, nil
}

func optTs(p *int64) string {
	if p == nil {
		return "-"
	}
	return itoa(*p)
}

func (a *app) timelogLsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "ls FILE",
		Short: "List the logs with their record, page and tombstone counts (read-only)",
		Long: `List the time-series logs of the store with, for each, the visible records,
the records stored in pages (deleted ones not yet compacted away included),
the pages, the stored range deletes (tombstones), and the first and last
timestamps.`,
		Example: `  snkv timelog ls app.db
  snkv timelog ls app.db --json`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(args[0], false, func(db *kvstore.Store) error {
				names, err := timelog.List(context.Background(), db)
				if err != nil {
					return err
				}
				t := a.table("LOG", "RECORDS", "STORED", "PAGES", "TOMBSTONES", "FIRST", "LAST")
				err = withEachLogIn(cmd.Context(), db, names, func(name string, l *timelog.Log, s *timelog.Snapshot) error {
					sum, err := summarize(l, s)
					if err != nil {
						return err
					}
					if a.json {
						return a.emit(sum)
					}
					t.row(a.showCell([]byte(name), false), itoa(sum.Records), itoa(sum.Stored), itoa(int64(sum.Pages)),
						itoa(int64(sum.Tombstones)), optTs(sum.First), optTs(sum.Last))
					return nil
				})
				if err != nil || a.json {
					return err
				}
				return t.flush()
			})
		},
	}
}

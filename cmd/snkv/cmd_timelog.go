package main

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
	"github.com/spf13/cobra"
)

// ctxCheckEvery is how many records a listing writes between two looks at
// the command's context (Ctrl-C).
const ctxCheckEvery = 4096

const timelogLong = `Read the time-series logs of the store (package timelog): logs of records
(timestamp, handle), both 64-bit integers.

ls, count, range, tail and stats open the store and the log read-only: they
are safe next to an application writing the log, and see what that
application has flushed (records still in its memory buffer are not visible
yet). append, delete-before and compact write: they take the log's writer
lock for the command, and fail while an application has the log open for
writing.

Timestamps are opaque int64 values to the library, so they are printed and
read as integers, in whatever unit the application uses. Give --time-unit
(s, ms, us or ns since the Unix epoch) to also show them in RFC 3339 (UTC)
and to pass --start/--end as RFC 3339 times; without it, an RFC 3339 bound
is refused rather than guessed. Ranges are half-open: [start, end).

A log that does not exist: exit code 3.`

// timelogFlags are the flags of the timelog subcommands.
type timelogFlags struct {
	unit       string // --time-unit
	start, end string
	reverse    bool
	limit      int
	n          int
}

func (a *app) timelogCommand() *cobra.Command {
	var f timelogFlags
	c := group(&cobra.Command{
		Use:   "timelog",
		Short: "Time-series logs: ls, count, range, tail, stats, append, delete-before, compact",
		Long:  timelogLong,
	})
	c.PersistentFlags().StringVar(&f.unit, "time-unit", "", "`UNIT` of the log's timestamps: s, ms, us or ns since the Unix epoch (shows RFC 3339 too, accepts RFC 3339 bounds)")
	for _, sub := range []*cobra.Command{
		takes(a.timelogCountCommand(&f), "json,time-unit"), takes(a.timelogRangeCommand(&f), "json,escape,time-unit"),
		takes(a.timelogTailCommand(&f), "json,escape,time-unit"), takes(a.timelogStatsCommand(&f), "json,escape,time-unit"),
		takes(a.timelogAppendCommand(&f), "json,time-unit,hex,base64"), takes(a.timelogDeleteBeforeCommand(&f), "json,time-unit"),
		takes(a.timelogCompactCommand(), "json"),
	} {
		sub.ValidArgsFunction = completeLog
		c.AddCommand(sub)
	}
	c.AddCommand(takes(a.timelogLsCommand(), "json,escape"))
	return c
}

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

// withLog opens the store at path and its log name read-only, takes one
// snapshot of the log and runs fn on it.
func (a *app) withLog(ctx context.Context, path, name string, fn func(l *timelog.Log, s *timelog.Snapshot) error) error {
	return a.withStore(path, false, func(db *kvstore.Store) error {
		return withLogIn(ctx, db, name, fn)
	})
}

func withLogIn(ctx context.Context, db *kvstore.Store, name string, fn func(l *timelog.Log, s *timelog.Snapshot) error) error {
	return withReadLog(db, name, func(l *timelog.Log) (err error) {
		s, err := l.SnapshotContext(ctx)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := s.Close(); cerr != nil && err == nil {
				err = cerr
			}
		}()
		return fn(l, s)
	})
}

// withReadLog opens the log name of db read-only and runs fn on it.
func withReadLog(db *kvstore.Store, name string, fn func(l *timelog.Log) error) error {
	return withLog(db, name, timelog.Options{ReadOnly: true, Maintenance: timelog.Manual}, fn)
}

// withLog opens the log name of db with opts, runs fn on it and closes it,
// turning the errors of the open into the command's messages.
func withLog(db *kvstore.Store, name string, opts timelog.Options, fn func(l *timelog.Log) error) (err error) {
	l, err := timelog.Open(db, name, opts)
	switch {
	case errors.Is(err, timelog.ErrNotFound):
		return notFound{fmt.Sprintf("time-series log %q does not exist (see 'snkv timelog ls')", name)}
	case errors.Is(err, timelog.ErrLocked):
		return fmt.Errorf("time-series log %q is open for writing by another program (its writer lock is taken): write through that program, or stop it first", name)
	case errors.Is(err, kvstore.ErrInvalidName):
		return usageError{fmt.Errorf("bad log name %q: %s", name, strip(err))}
	case err != nil:
		return err
	}
	defer func() {
		if cerr := l.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	return fn(l)
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
				names, err := timelog.List(db)
				if err != nil {
					return err
				}
				t := a.table("LOG", "RECORDS", "STORED", "PAGES", "TOMBSTONES", "FIRST", "LAST")
				for _, name := range names {
					err := withLogIn(cmd.Context(), db, name, func(l *timelog.Log, s *timelog.Snapshot) error {
						sum, err := summarize(l, s)
						if err != nil {
							return err
						}
						if a.json {
							return a.emit(sum)
						}
						t.row(a.show([]byte(name)), itoa(sum.Records), itoa(sum.Stored), itoa(int64(sum.Pages)),
							itoa(int64(sum.Tombstones)), optTs(sum.First), optTs(sum.Last))
						return nil
					})
					if err != nil {
						return err
					}
				}
				if a.json {
					return nil
				}
				return t.flush()
			})
		},
	}
}

// bounds reads --start and --end: lo and hi are the range's ends, both
// included (the exclusive --end already taken one below), empty when no
// timestamp can be in it.
func (f *timelogFlags) bounds(cmd *cobra.Command) (lo, hi int64, hasStart, hasEnd, empty bool, err error) {
	perSec, err := parseTimeUnit(f.unit)
	if err != nil {
		return 0, 0, false, false, false, err
	}
	lo, hi = math.MinInt64, math.MaxInt64
	if hasStart = cmd.Flags().Changed("start"); hasStart {
		if lo, err = parseTimestamp("start", f.start, perSec); err != nil {
			return
		}
	}
	if hasEnd = cmd.Flags().Changed("end"); hasEnd {
		var end int64
		if end, err = parseTimestamp("end", f.end, perSec); err != nil {
			return
		}
		if hasStart && end < lo {
			err = usagef("--start %s is after --end %s", f.start, f.end)
			return
		}
		if end == math.MinInt64 {
			return lo, hi, hasStart, hasEnd, true, nil
		}
		hi = end - 1
	}
	return lo, hi, hasStart, hasEnd, lo > hi, nil
}

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

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

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
			perSec, _ := parseTimeUnit(f.unit)
			lo, hi, _, _, empty, err := f.bounds(cmd)
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

func (a *app) timelogTailCommand(f *timelogFlags) *cobra.Command {
	var follow bool
	c := &cobra.Command{
		Use:   "tail FILE LOG",
		Short: "List a log's newest records, and follow new ones with -f (read-only)",
		Long: `List the N records of LOG with the largest timestamps (-n, default 10),
oldest of them first, as tail does. With -f (--follow) it then waits, and
prints each record flushed later with a timestamp at or after the last one
shown, until Ctrl-C (which ends it with exit code 0). Records appended out
of order, with an older timestamp, are not followed. A values log shows the
values too.`,
		Example: `  snkv timelog tail app.db cpu
  snkv timelog tail app.db cpu -n 100 --time-unit ms
  snkv timelog tail app.db cpu -f`,
		Args: nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.n < 0 {
				return usagef("-n must not be negative")
			}
			perSec, err := parseTimeUnit(f.unit)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			return a.withStore(args[0], false, func(db *kvstore.Store) error {
				return withReadLog(db, args[1], func(l *timelog.Log) error {
					// The snapshot is closed before any following: a
					// snapshot holds a read transaction, which would keep
					// the writer's checkpoints from emptying the WAL.
					last, err := lastEntries(ctx, l, f.n)
					if err != nil {
						return err
					}
					out := a.recordWriter(l, perSec)
					for _, e := range last {
						if err := out.write(e); err != nil {
							return err
						}
					}
					if !follow {
						return out.end(ctx, nil, len(last))
					}
					return a.follow(ctx, l, out, last)
				})
			})
		},
	}
	c.Flags().IntVarP(&f.n, "lines", "n", 10, "show the newest `N` records")
	c.Flags().BoolVarP(&follow, "follow", "f", false, "then print new records as they are flushed, until Ctrl-C")
	return c
}

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

// lsLogs ends snkv ls: the time-series logs of the store with their record
// counts, as a second table after a blank line (none without logs), or as
// {"log":...,"records":N} lines after the column families' ones.
func (a *app) lsLogs(ctx context.Context, db *kvstore.Store) error {
	names, err := timelog.List(db)
	if err != nil || len(names) == 0 {
		return err
	}
	var t *table
	if !a.json {
		fmt.Fprintln(a.out)
		t = a.table("TIME-SERIES LOG", "RECORDS")
	}
	for _, name := range names {
		err := withLogIn(ctx, db, name, func(l *timelog.Log, s *timelog.Snapshot) error {
			n, err := s.Count()
			if err != nil {
				return err
			}
			if a.json {
				return a.emit(map[string]any{"log": name, "records": n})
			}
			t.row(a.show([]byte(name)), itoa(n))
			return nil
		})
		if err != nil {
			return err
		}
	}
	if a.json {
		return nil
	}
	return t.flush()
}

// completeLog completes the LOG argument with the logs of the store named
// by the first argument, opened read-only (the first argument itself is a
// file name).
func completeLog(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	args = withDefaultStore(args)
	switch len(args) {
	case 0:
		return nil, cobra.ShellCompDirectiveDefault
	case 1:
	default:
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	db, err := openForCompletion(args[0])
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer db.Close()
	names, _ := timelog.List(db)
	return names, cobra.ShellCompDirectiveNoFileComp
}

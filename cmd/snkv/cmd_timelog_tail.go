package main

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
	"github.com/spf13/cobra"
)

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
				return withReadLog(cmd.Context(), db, args[1], func(l *timelog.Log) error {
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

// lastEntries reads the n entries of l with the largest timestamps,
// oldest of them first, from one snapshot closed before it returns.
func lastEntries(ctx context.Context, l *timelog.Log, n int) (last []timelog.Entry, err error) {
	s, err := l.SnapshotContext(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := s.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if n > 0 {
		for e, err := range entries(s, l.Values(), math.MinInt64, math.MaxInt64, true) {
			if err != nil {
				return nil, err
			}
			if last = append(last, e); len(last) == n {
				break
			}
		}
	}
	slices.Reverse(last)
	return last, nil
}

// follow polls the log for records flushed since the entries shown, with a
// timestamp at or after the last of them, and prints them until the
// context ends (Ctrl-C: exit code 0). Each poll reads one snapshot and
// closes it at once, so that the writer's checkpoints are never held up
// between polls.
func (a *app) follow(ctx context.Context, l *timelog.Log, out *recordWriter, shown []timelog.Entry) error {
	if out.t != nil {
		if err := out.t.flush(); err != nil { // widths fixed: rows go out at once
			return err
		}
	}
	// from is the timestamp to read from, skip the records at it already
	// shown (equal timestamps come in append order). With nothing shown,
	// follow from the log's last record on.
	from, skip := int64(math.MinInt64), 0
	if len(shown) > 0 {
		from = shown[len(shown)-1].Ts
		for _, e := range shown {
			if e.Ts == from {
				skip++
			}
		}
	} else {
		all, err := lastEntries(ctx, l, 1)
		if err != nil {
			return err
		}
		if len(all) > 0 {
			from = all[0].Ts
			if skip, err = countAt(ctx, l, from); err != nil {
				return err
			}
		}
	}
	tick := time.NewTicker(followEvery)
	defer tick.Stop()
	for {
		if err := a.flushOut(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		var err error
		if from, skip, err = a.poll(ctx, l, out, from, skip); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}

// countAt counts the records of l at timestamp ts.
func countAt(ctx context.Context, l *timelog.Log, ts int64) (n int, err error) {
	s, err := l.SnapshotContext(ctx)
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := s.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	for _, err := range s.Equal(ts) {
		if err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

// poll prints the records of one new snapshot from timestamp from on,
// skipping the first skip at it (already shown), and returns where the
// next poll starts.
func (a *app) poll(ctx context.Context, l *timelog.Log, out *recordWriter, from int64, skip int) (_ int64, _ int, err error) {
	snap, err := l.SnapshotContext(ctx)
	if err != nil {
		return from, skip, err
	}
	defer func() {
		if cerr := snap.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	seen := 0
	for e, err := range entries(snap, l.Values(), from, math.MaxInt64, false) {
		if err != nil {
			return from, skip, err
		}
		if e.Ts == from && seen < skip {
			seen++
			continue
		}
		if e.Ts != from {
			from, skip, seen = e.Ts, 0, 0
		}
		skip++
		seen++
		if err := out.write(e); err != nil {
			return from, skip, err
		}
	}
	return from, skip, nil
}

// followEvery is how often tail -f looks for new records.
const followEvery = 250 * time.Millisecond

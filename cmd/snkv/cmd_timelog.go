package main

import (
	"context"
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
		takes(a.timelogCountCommand(&f), "json,time-unit"), takes(a.timelogRangeCommand(&f), "json,escape,time-unit,no-header"),
		takes(a.timelogTailCommand(&f), "json,escape,time-unit,no-header"), takes(a.timelogStatsCommand(&f), "json,escape,time-unit"),
		takes(a.timelogAppendCommand(&f), "json,time-unit,hex,base64,max-value-size"), takes(a.timelogDeleteBeforeCommand(&f), "json,time-unit"),
		takes(a.timelogCompactCommand(), "json,no-header"),
	} {
		sub.ValidArgsFunction = completeLog
		c.AddCommand(sub)
	}
	c.AddCommand(takes(a.timelogLsCommand(), "json,escape,no-header"))
	return c
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
	names, _ := timelog.List(context.Background(), db)
	return names, cobra.ShellCompDirectiveNoFileComp
}

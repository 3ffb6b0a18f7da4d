package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/snkv-go/snkv/timelog"
	"github.com/spf13/cobra"
)

// appendBatch is how many records append hands to the log at a time.
const appendBatch = 4096

func (a *app) timelogAppendCommand(f *timelogFlags) *cobra.Command {
	var values bool
	c := &cobra.Command{
		Use:   "append FILE LOG [TS HANDLE | TS VALUE]",
		Short: "Append records to a log, from the arguments or from stdin",
		Long: `Append one record given as arguments, or, without them, one record per line
of stdin: "TS HANDLE" (two integers separated by blanks) for a log of
handles, "TS VALUE" (the value is the rest of the line after the first tab
or space, decoded with --hex/--base64 like keys) for a values log, whose
handles the log assigns. TS is an integer, or an RFC 3339 time with
--time-unit. Empty lines are skipped.

The log must exist unless --create is given: it then creates the log (and
the store), as a values log with --values. The log's writer lock is taken
for the command (it fails if an application has the log open for writing).
Records are flushed to the store every 65,536 records and when the command
ends, so memory stays bounded however long stdin is; the count printed is
the count stored. Ctrl-C, or a bad line, stops reading stdin and keeps
every record before it. On a terminal a progress bar shows the records
appended (the share of stdin read when it is a file). --json prints
{"log","appended"}.`,
		Example: `  snkv timelog append app.db cpu 1700000000000 42
  printf '1 10\n2 20\n' | snkv timelog append app.db cpu
  snkv timelog append app.db events --create --values --time-unit s 2030-01-02T03:04:05Z 'disk full'`,
		Args: nargs(2, 4),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 3 {
				return usagef("timelog append: give TS and HANDLE (or VALUE) both, or neither to read stdin")
			}
			perSec, err := parseTimeUnit(f.unit)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			var n int64
			err = a.withWritableLog(cmd.Context(), args[0], args[1], true, values, func(l *timelog.Log) error {
				ap := a.newAppender(ctx, l, len(args) < 4)
				var err error
				if len(args) == 4 {
					var ts int64
					if ts, err = parseTimestamp("TS", args[2], perSec); err == nil {
						err = ap.appendOne(ts, args[3])
					}
				} else {
					err = ap.appendStdin(perSec)
				}
				err = ap.finish(err)
				ap.bar.done()
				n = ap.stored
				return err
			})
			if err == nil && a.json {
				return a.emit(map[string]any{"log": args[1], "appended": n})
			}
			return err
		},
	}
	c.Flags().BoolVar(&values, "values", false, "with --create: create the log as a values log")
	return c
}

// Bounds of what append keeps in the log's write buffer before it
// flushes: a flush every flushRecords records (or flushValueBytes bytes of
// values) keeps the buffer, and the queue of sealed buffers behind it,
// far below the log's own limits whatever its busy policy, so memory stays
// bounded however long stdin is.
const (
	flushRecords    = 1 << 16
	flushValueBytes = 8 << 20
)

// appender hands records to a log in batches and flushes them in bounded
// amounts, counting what the log accepted and what is durable.
type appender struct {
	a   *app
	l   *timelog.Log
	ctx context.Context
	// bar shows the records appended from stdin, or the share of stdin
	// read when it is a file (byBytes).
	bar     *progress
	byBytes bool

	batch    []timelog.Record
	accepted int64 // records the log accepted
	stored   int64 // records durable after the last flush
	pending  int64 // records accepted since that flush
	valBytes int   // bytes of values accepted since that flush
}

// newAppender returns the appender of l, with a progress bar on a
// terminal when the records come from stdin.
func (a *app) newAppender(ctx context.Context, l *timelog.Log, fromStdin bool) *appender {
	ap := &appender{a: a, l: l, ctx: ctx, bar: &progress{}}
	if !fromStdin {
		return ap
	}
	if f, ok := a.in.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			ap.bar, ap.byBytes = a.progressBytes(fi.Size(), "appending"), true
			return ap
		}
	}
	ap.bar = a.progress(-1, "appending", "records")
	return ap
}

// took counts n records the log accepted by a write that returned
// err, and reports err unless it only says that: a write that returns
// timelog.ErrBusy was accepted (the sealed queue is full), and is never
// retried; the next flush makes room.
func (ap *appender) took(n int, values int, err error) (busy bool, _ error) {
	if err != nil && !errors.Is(err, timelog.ErrBusy) {
		return false, err
	}
	ap.accepted += int64(n)
	ap.pending += int64(n)
	ap.valBytes += values
	if !ap.byBytes {
		ap.bar.add(n)
	}
	return err != nil, nil
}

// add appends one record of a log of handles, through the batch.
func (ap *appender) add(ts int64, h uint64) error {
	ap.batch = append(ap.batch, timelog.Record{Ts: ts, Handle: h})
	if len(ap.batch) < appendBatch {
		return nil
	}
	return ap.handOver()
}

// addValue appends one record of a values log.
func (ap *appender) addValue(ts int64, v []byte) error {
	_, err := ap.l.AppendValue(ts, v)
	busy, err := ap.took(1, len(v), err)
	if err != nil {
		return err
	}
	return ap.maybeFlush(busy)
}

// handOver gives the batch to the log.
func (ap *appender) handOver() error {
	if len(ap.batch) == 0 {
		return nil
	}
	err := ap.l.AppendBatch(ap.batch)
	n := len(ap.batch)
	ap.batch = ap.batch[:0]
	busy, err := ap.took(n, 0, err)
	if err != nil {
		return err
	}
	return ap.maybeFlush(busy)
}

// maybeFlush flushes when the log said it is busy or the bounds are
// reached.
func (ap *appender) maybeFlush(busy bool) error {
	if busy || ap.pending >= flushRecords || ap.valBytes >= flushValueBytes {
		return ap.flush(ap.ctx)
	}
	return nil
}

// flush hands over the batch and makes every accepted record durable.
func (ap *appender) flush(ctx context.Context) error {
	if err := ap.handOver(); err != nil {
		return err
	}
	if ap.pending == 0 {
		return nil
	}
	if err := ap.l.Flush(ctx); err != nil {
		return err
	}
	ap.stored += ap.pending
	ap.pending, ap.valBytes = 0, 0
	return nil
}

// finish flushes what is left after err (nil: the input ended) and
// returns the command's error, which says how many records are stored.
// The flush runs even when the command was interrupted: every record the
// log accepted is kept.
func (ap *appender) finish(err error) error {
	ferr := ap.flush(context.Background())
	var ie interruptError
	switch {
	case ferr != nil && err == nil:
		return fmt.Errorf("%w (%s stored; %s after them not flushed)", ferr, countOf(ap.stored, "record"), countOf(ap.pending, "record"))
	case ferr != nil:
		return fmt.Errorf("%w (%s stored; %s after them not flushed: %v)", err, countOf(ap.stored, "record"), countOf(ap.pending, "record"), ferr)
	case errors.As(err, &ie) || interrupted(ap.ctx, err):
		return interruptedf("interrupted after appending %s (stored)", countOf(ap.stored, "record"))
	case err != nil && ap.stored > 0:
		return fmt.Errorf("%w (%s before it appended and stored)", err, countOf(ap.stored, "record"))
	}
	return err
}

// appendOne appends the record of the arguments: a handle, or in a values
// log a value.
func (ap *appender) appendOne(ts int64, field string) error {
	if ap.l.Values() {
		v, err := ap.a.decode("VALUE", field)
		if err != nil {
			return err
		}
		return ap.addValue(ts, v)
	}
	h, err := strconv.ParseUint(field, 10, 64)
	if err != nil {
		return usagef("bad HANDLE %q: want an unsigned integer (the log stores handles, not values)", field)
	}
	return ap.add(ts, h)
}

// appendStdin appends one record per line of stdin.
func (ap *appender) appendStdin(perSec int64) error {
	// A line holds a timestamp and a value of at most the limit, in hex
	// at most.
	limit := ap.a.valueLimit()
	lr := readLines(ap.a.in, 2*limit+64)
	defer lr.stop()
	line := 0
	for {
		c, ok, err := lr.next(ap.ctx)
		if err != nil {
			return interruptedf("interrupted")
		}
		if !ok {
			return nil
		}
		if errors.Is(c.err, errLineTooLong) {
			return usageError{fmt.Errorf("line %d: %w: a value of at most %d bytes (--max-value-size raises the limit)", line+1, c.err, limit)}
		}
		if c.err != nil {
			return fmt.Errorf("reading stdin: %w", c.err)
		}
		read := 0
		for _, b := range c.lines {
			line++
			read += len(b)
			if err := ap.appendLine(b, line, perSec); err != nil {
				return err
			}
		}
		lr.release(c)
		if ap.byBytes {
			ap.bar.add(read)
		}
	}
}

// appendLine parses one line of stdin and appends its record.
func (ap *appender) appendLine(b []byte, line int, perSec int64) error {
	b = bytes.TrimRight(b, "\r\n")
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	tsField, rest, ok := cutField(b)
	if !ok {
		return usagef("line %d: want \"TS HANDLE\" or \"TS VALUE\", got %q", line, showText(b))
	}
	ts, err := parseTimestamp("TS", string(tsField), perSec)
	if err != nil {
		return fmt.Errorf("line %d: %w", line, err)
	}
	if ap.l.Values() {
		v, err := ap.a.decode("VALUE", string(rest))
		if err == nil {
			err = ap.addValue(ts, v)
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		return nil
	}
	h, err := strconv.ParseUint(string(bytes.TrimSpace(rest)), 10, 64)
	if err != nil {
		return usagef("line %d: bad HANDLE %q: want an unsigned integer", line, showText(rest))
	}
	return ap.add(ts, h)
}

// cutField splits a line at its first tab, or else its first space, after
// the leading field.
func cutField(b []byte) (field, rest []byte, ok bool) {
	b = bytes.TrimLeft(b, " \t")
	i := bytes.IndexAny(b, "\t ")
	if i < 0 {
		return nil, nil, false
	}
	return b[:i], b[i+1:], true
}

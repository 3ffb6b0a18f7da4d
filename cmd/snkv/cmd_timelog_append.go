package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
Records are durable when the command ends. Ctrl-C stops reading stdin and
keeps what was appended before it. --json prints {"log","appended"}.`,
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
			err = a.withWritableLog(args[0], args[1], true, values, func(l *timelog.Log) error {
				if len(args) == 4 {
					ts, err := parseTimestamp("TS", args[2], perSec)
					if err != nil {
						return err
					}
					if err := a.appendOne(l, ts, args[3], 0); err != nil {
						return err
					}
					n = 1
					return nil
				}
				err := a.appendStdin(ctx, l, perSec, &n)
				var ie interruptError
				if err != nil && n > 0 && !errors.As(err, &ie) {
					err = fmt.Errorf("%w (the %d records before it are appended)", err, n)
				}
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

// appendOne appends the record of one line (line 0: of the arguments): a
// handle, or in a values log a value.
func (a *app) appendOne(l *timelog.Log, ts int64, field string, line int) error {
	if l.Values() {
		v, err := a.decode("VALUE", field)
		if err != nil {
			return err
		}
		_, err = l.AppendValue(ts, v)
		return err
	}
	h, err := strconv.ParseUint(field, 10, 64)
	if err != nil {
		return usagef("bad HANDLE %q: want an unsigned integer (the log stores handles, not values)", field)
	}
	return l.Append(ts, h)
}

// appendStdin appends one record per line of stdin, counting them in n.
func (a *app) appendStdin(ctx context.Context, l *timelog.Log, perSec int64, n *int64) error {
	chunks := readLines(a.in)
	line := 0
	var batch []timelog.Record
	flushBatch := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := l.AppendBatch(batch)
		if err == nil {
			*n += int64(len(batch))
		}
		batch = batch[:0]
		return err
	}
	for {
		var c chunk
		var ok bool
		select {
		case <-ctx.Done():
			if err := flushBatch(); err != nil {
				return err
			}
			return interruptedf("interrupted after appending %d records (they are stored)", *n)
		case c, ok = <-chunks:
		}
		if !ok {
			return flushBatch()
		}
		if c.err != nil {
			return fmt.Errorf("reading stdin: %w", c.err)
		}
		for _, b := range c.lines {
			line++
			if err := a.appendLine(l, b, line, perSec, &batch, flushBatch, n); err != nil {
				if ferr := flushBatch(); ferr != nil {
					return ferr
				}
				return err
			}
		}
	}
}

// appendLine parses one line of stdin and appends it (a values log) or
// adds it to batch, handing a full batch to flushBatch.
func (a *app) appendLine(l *timelog.Log, b []byte, line int, perSec int64, batch *[]timelog.Record, flushBatch func() error, n *int64) error {
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
	if l.Values() {
		if err := a.appendOne(l, ts, string(rest), line); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		*n++
		return nil
	}
	h, err := strconv.ParseUint(string(bytes.TrimSpace(rest)), 10, 64)
	if err != nil {
		return usagef("line %d: bad HANDLE %q: want an unsigned integer", line, showText(rest))
	}
	if *batch = append(*batch, timelog.Record{Ts: ts, Handle: h}); len(*batch) == appendBatch {
		return flushBatch()
	}
	return nil
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

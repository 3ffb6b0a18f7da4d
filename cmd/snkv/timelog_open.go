package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
	"github.com/spf13/cobra"
)

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

// withEachLogIn runs fn on a snapshot of each log of names in turn (as
// withLogIn does), stopping at the first error.
func withEachLogIn(ctx context.Context, db *kvstore.Store, names []string, fn func(name string, l *timelog.Log, s *timelog.Snapshot) error) error {
	for _, name := range names {
		err := withLogIn(ctx, db, name, func(l *timelog.Log, s *timelog.Snapshot) error { return fn(name, l, s) })
		if err != nil {
			return err
		}
	}
	return nil
}

// withReadLog opens the log name of db read-only and runs fn on it.
func withReadLog(db *kvstore.Store, name string, fn func(l *timelog.Log) error) error {
	return withLog(db, name, timelog.Options{ReadOnly: true, Maintenance: timelog.Manual}, fn)
}

// withLog opens the log name of db with opts, runs fn on it and closes it,
// turning the errors of the open into the command's messages.
func withLog(db *kvstore.Store, name string, opts timelog.Options, fn func(l *timelog.Log) error) (err error) {
	l, err := timelog.Open(context.Background(), db, name, opts)
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

// withWritableLog opens the store at path and its log name for writing
// (manual maintenance: nothing runs in the background), runs fn and closes
// the log, which flushes what fn appended. A missing log is created only
// when create is set (with values: a values log).
func (a *app) withWritableLog(path, name string, canCreate, values bool, fn func(l *timelog.Log) error) error {
	create := canCreate && a.create
	return a.withStore(path, true, func(db *kvstore.Store) error {
		names, err := timelog.List(context.Background(), db)
		if err != nil {
			return err
		}
		exists := slices.Contains(names, name)
		switch {
		case !exists && !create:
			// A name no log can have is a usage error, not a missing log:
			// a read-only Open tells which, and creates nothing.
			l, err := timelog.Open(context.Background(), db, name, timelog.Options{ReadOnly: true, Maintenance: timelog.Manual})
			if errors.Is(err, kvstore.ErrInvalidName) {
				return usageError{fmt.Errorf("bad log name %q: %s", name, strip(err))}
			} else if err == nil {
				_ = l.Close()
			}
			hint := ""
			if canCreate {
				hint = "; pass --create to create it"
			}
			return notFound{fmt.Sprintf("time-series log %q does not exist (see 'snkv timelog ls'%s)", name, hint)}
		case exists && values:
			// Asked of an existing log, Values would add a values table
			// to a log of handles.
			return usagef("--values applies when --create creates the log; %q exists already", name)
		}
		return withLog(db, name, timelog.Options{Maintenance: timelog.Manual, Values: values}, fn)
	})
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

package timelog_test

import (
	"context"
	"database/sql"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"iter"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // database/sql driver, to damage a file as another tool would

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

// The errors of both packages, by name. TestErrorFamily fails when either
// package gains an error these maps do not list.
var (
	logErrors = map[string]error{
		"ErrInvalidRange":    timelog.ErrInvalidRange,
		"ErrBusy":            timelog.ErrBusy,
		"ErrQueueFull":       timelog.ErrQueueFull,
		"ErrLocked":          timelog.ErrLocked,
		"ErrSnapshotsOpen":   timelog.ErrSnapshotsOpen,
		"ErrClosed":          timelog.ErrClosed,
		"ErrReadOnly":        timelog.ErrReadOnly,
		"ErrNotFound":        timelog.ErrNotFound,
		"ErrInvalidOption":   timelog.ErrInvalidOption,
		"ErrCorrupt":         timelog.ErrCorrupt,
		"ErrNoValues":        timelog.ErrNoValues,
		"ErrValuesLog":       timelog.ErrValuesLog,
		"ErrValueTooLarge":   timelog.ErrValueTooLarge,
		"ErrValuesLayout":    timelog.ErrValuesLayout,
		"ErrValueNotFound":   timelog.ErrValueNotFound,
		"ErrInvalidArgument": timelog.ErrInvalidArgument,
		"ErrManualMode":      timelog.ErrManualMode,
	}
	storeErrors = map[string]error{
		"ErrNotFound": kvstore.ErrNotFound, "ErrClosed": kvstore.ErrClosed,
		"ErrReadOnly": kvstore.ErrReadOnly, "ErrInvalidKey": kvstore.ErrInvalidKey,
		"ErrKeyTooLarge": kvstore.ErrKeyTooLarge, "ErrValueTooLarge": kvstore.ErrValueTooLarge,
		"ErrInvalidName": kvstore.ErrInvalidName, "ErrReservedName": kvstore.ErrReservedName,
		"ErrExists": kvstore.ErrExists, "ErrTxDone": kvstore.ErrTxDone,
		"ErrReadOnlyTx": kvstore.ErrReadOnlyTx, "ErrBusy": kvstore.ErrBusy,
		"ErrCorrupt": kvstore.ErrCorrupt, "ErrNotStore": kvstore.ErrNotStore,
		"ErrVersion": kvstore.ErrVersion, "ErrCantOpen": kvstore.ErrCantOpen,
		"ErrInvalidTTL": kvstore.ErrInvalidTTL, "ErrClockRange": kvstore.ErrClockRange,
		"ErrInvalidOption": kvstore.ErrInvalidOption, "ErrDiskFull": kvstore.ErrDiskFull,
		"ErrIO": kvstore.ErrIO, "ErrDropDefault": kvstore.ErrDropDefault,
		"ErrForeignHandle": kvstore.ErrForeignHandle, "ErrInvalidArgument": kvstore.ErrInvalidArgument,
		"ErrAuth": kvstore.ErrAuth, "ErrNotEncrypted": kvstore.ErrNotEncrypted,
		"ErrScrubPending": kvstore.ErrScrubPending, "ErrClosedCursor": kvstore.ErrClosedCursor,
	}
	// sameCondition: the timelog errors that are the store's error of the
	// same name.
	sameCondition = []string{"ErrBusy", "ErrClosed", "ErrReadOnly", "ErrNotFound",
		"ErrInvalidOption", "ErrCorrupt", "ErrValueTooLarge", "ErrInvalidArgument"}
	// narrower: timelog errors that are a case of a broader one of both
	// packages.
	narrower = map[string]string{"ErrInvalidRange": "ErrInvalidArgument", "ErrValueNotFound": "ErrNotFound"}
)

// exportedErrors returns the names of the exported package-level variables
// named Err* declared in the non-test Go files of dir.
func exportedErrors(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var names []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					if n.IsExported() && strings.HasPrefix(n.Name, "Err") {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// TestErrorFamily walks every pair of errors: each timelog error against
// each store error and each other timelog error. A timelog error matches
// the store's error of the same condition and nothing else of the store;
// the narrower ones match their broader error in both packages.
func TestErrorFamily(t *testing.T) {
	require.Equal(t, exportedErrors(t, "."), slices.Sorted(maps.Keys(logErrors)), "timelog's errors")
	require.Equal(t, exportedErrors(t, filepath.Join("..", "kvstore")), slices.Sorted(maps.Keys(storeErrors)), "kvstore's errors")
	for ln, le := range logErrors {
		for sn, se := range storeErrors {
			want := (sn == ln && slices.Contains(sameCondition, ln)) || narrower[ln] == sn
			require.Equal(t, want, errors.Is(le, se), "errors.Is(timelog.%s, kvstore.%s)", ln, sn)
		}
		for on, oe := range logErrors {
			want := on == ln || narrower[ln] == on
			require.Equal(t, want, errors.Is(le, oe), "errors.Is(timelog.%s, timelog.%s)", ln, on)
		}
	}
	for _, n := range sameCondition {
		require.Contains(t, storeErrors, n)
	}
}

// requireBoth requires err to match the timelog error and the store error
// of the same condition.
func requireBoth(t *testing.T, err error, name, what string) {
	t.Helper()
	require.ErrorIs(t, err, logErrors[name], "%s: timelog.%s", what, name)
	require.ErrorIs(t, err, storeErrors[name], "%s: kvstore.%s", what, name)
}

// requireEveryMethod requires that calls names, for every exported method of
// typ, either a call or the reason it needs none.
func requireEveryMethod(t *testing.T, typ reflect.Type, calls map[string]func() error, none map[string]string) {
	t.Helper()
	for i := range typ.NumMethod() {
		n := typ.Method(i).Name
		_, call := calls[n]
		_, skip := none[n]
		require.True(t, call != skip, "%v.%s: give it a call or a reason for none (not both)", typ, n)
	}
}

// TestErrorsOfAClosedStore: a store error coming out of the log matches the
// log's error too. On a closed store every Log method that reaches the
// store fails with an error that is both kvstore.ErrClosed and
// timelog.ErrClosed.
func TestErrorsOfAClosedStore(t *testing.T) {
	db, _ := openStore(t)
	l := openLog(t, db, "c", manual(timelog.Options{}))
	require.NoError(t, l.AppendBatch(recs(1, 10, 2, 20)))
	require.NoError(t, l.Flush(ctx))
	require.NoError(t, l.Append(3, 30)) // buffered: Flush, MaintStep and Close have work
	require.NoError(t, db.Close())

	_, err := timelog.Open(context.Background(), db, "d", timelog.Options{})
	requireBoth(t, err, "ErrClosed", "Open")
	_, err = timelog.OpenObjects(context.Background(), db, "d", timelog.Options{}, timelog.ObjectOptions[string]{})
	requireBoth(t, err, "ErrClosed", "OpenObjects")
	_, err = timelog.List(context.Background(), db)
	requireBoth(t, err, "ErrClosed", "List")
	requireBoth(t, timelog.Drop(ctx, db, "c"), "ErrClosed", "Drop")
	requireBoth(t, timelog.ForceDrop(ctx, db, "d"), "ErrClosed", "ForceDrop")

	calls := readCalls(l)
	for n, f := range map[string]func() error{
		"Flush":           func() error { return l.Flush(ctx) },
		"MaintStep":       func() error { _, err := l.MaintStep(ctx); return err },
		"IntegrityCheck":  func() error { return l.IntegrityCheck(ctx) },
		"Drop":            func() error { return l.Drop(ctx) },
		"Close":           l.Close,
		"Snapshot":        func() error { _, err := l.Snapshot(); return err },
		"SnapshotContext": func() error { _, err := l.SnapshotContext(ctx); return err },
		"Cursor":          func() error { _, err := l.Cursor(false); return err },
	} {
		calls[n] = f
	}
	buffered := "buffered: does not reach the store"
	none := map[string]string{
		"Append": buffered, "AppendBatch": buffered, "DeleteRange": buffered,
		"DeleteBefore": buffered, "DeleteFrom": buffered,
		"AppendValue": "a plain log: ErrNoValues", "AppendValues": "a plain log: ErrNoValues",
		"Compact": "only requests", "StartMaintenance": "a manual log: ErrManualMode",
		"StopMaintenance": "no error", "Stats": "no error", "Name": "no error",
		"ReadOnly": "no error", "Values": "no error", "In": "needs a transaction, which a closed store refuses",
	}
	requireEveryMethod(t, reflect.TypeFor[*timelog.Log](), calls, none)
	for _, n := range slices.Sorted(maps.Keys(calls)) {
		requireBoth(t, calls[n](), "ErrClosed", "Log."+n)
	}
}

// readCalls calls each read method of r, by name, returning the first
// error it meets.
func readCalls(r snapshotReads) map[string]func() error {
	return map[string]func() error{
		"Count":              func() error { _, err := r.Count(); return err },
		"CountRange":         func() error { _, err := r.CountRange(0, 9); return err },
		"Min":                func() error { _, _, err := r.Min(); return err },
		"Max":                func() error { _, _, err := r.Max(); return err },
		"Next":               func() error { _, _, err := r.Next(1); return err },
		"Prev":               func() error { _, _, err := r.Prev(3); return err },
		"Range":              func() error { return firstErr(r.Range(0, 9)) },
		"RangeReverse":       func() error { return firstErr(r.RangeReverse(0, 9)) },
		"Since":              func() error { return firstErr(r.Since(0)) },
		"SinceReverse":       func() error { return firstErr(r.SinceReverse(0)) },
		"Until":              func() error { return firstErr(r.Until(9)) },
		"UntilReverse":       func() error { return firstErr(r.UntilReverse(9)) },
		"Equal":              func() error { return firstErr(r.Equal(1)) },
		"EqualReverse":       func() error { return firstErr(r.EqualReverse(1)) },
		"All":                func() error { return firstErr(r.All()) },
		"AllReverse":         func() error { return firstErr(r.AllReverse()) },
		"Columns":            func() error { return firstErr(r.Columns(0, 9)) },
		"ColumnsAll":         func() error { return firstErr(r.ColumnsAll()) },
		"Value":              func() error { _, err := r.Value(1); return err },
		"RangeValues":        func() error { return firstErr(r.RangeValues(0, 9)) },
		"RangeValuesReverse": func() error { return firstErr(r.RangeValuesReverse(0, 9)) },
		"AllValues":          func() error { return firstErr(r.AllValues()) },
	}
}

// firstErr returns the first error of an iteration, or nil.
func firstErr[T any](s iter.Seq2[T, error]) error {
	for _, err := range s {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestErrorsOfAClosedLog: the log's own ErrClosed is the store's too.
func TestErrorsOfAClosedLog(t *testing.T) {
	db, _ := openStore(t)
	l, err := timelog.Open(context.Background(), db, "c", manual(timelog.Options{}))
	require.NoError(t, err)
	s, err := l.Snapshot()
	require.NoError(t, err)
	require.NoError(t, s.Close())
	requireBoth(t, s.Close(), "ErrClosed", "Snapshot.Close twice")
	require.NoError(t, l.Close())
	requireBoth(t, l.Append(1, 1), "ErrClosed", "Append")
	requireBoth(t, l.Flush(ctx), "ErrClosed", "Flush")
	_, err = l.Snapshot()
	requireBoth(t, err, "ErrClosed", "Snapshot")
	requireBoth(t, l.Close(), "ErrClosed", "Close twice")
	// It read the store through the closed log and reported it sound.
	requireBoth(t, l.IntegrityCheck(ctx), "ErrClosed", "IntegrityCheck")
}

// dropOutside drops the tables of log name whose suffixes are given, as
// another tool would, from a closed store file.
func dropOutside(t *testing.T, path, name string, suffixes ...string) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer raw.Close()
	for _, s := range suffixes {
		_, err := raw.Exec(`DROP TABLE "__snkv_timelog:` + name + s + `"`)
		require.NoError(t, err)
	}
}

// TestErrorsOfADamagedLog: a page the log cannot decode is the store's
// ErrCorrupt too (so the CLI exits 4 on it), and the store's ErrCorrupt for
// a table dropped outside snkv is the log's. Every read method of a
// snapshot, cursor and Objects meets it.
func TestErrorsOfADamagedLog(t *testing.T) {
	t.Run("page", func(t *testing.T) {
		db, _ := openStore(t)
		l := openLog(t, db, "p", manual(timelog.Options{}))
		require.NoError(t, l.AppendBatch(recs(1, 10, 2, 20)))
		require.NoError(t, l.Flush(ctx))
		rows := pageRows(t, db, "p")
		require.Len(t, rows, 1)
		pages, err := layer.OpenHiddenTable(ctx, db, "timelog", "p/pages")
		require.NoError(t, err)
		require.NoError(t, pages.Put(rows[0].key, []byte("TLP\x03 not a page")))
		_, _, err = l.Min()
		requireBoth(t, err, "ErrCorrupt", "Min of a bad page")
		requireBoth(t, l.IntegrityCheck(ctx), "ErrCorrupt", "IntegrityCheck")
	})
	t.Run("table", func(t *testing.T) {
		db, path := openStore(t)
		l, err := timelog.Open(context.Background(), db, "v", manual(timelog.Options{Values: true}))
		require.NoError(t, err)
		_, err = l.AppendValues([]int64{1, 2, 3}, [][]byte{[]byte("a"), []byte("b"), []byte("c")})
		require.NoError(t, err)
		require.NoError(t, l.Flush(ctx))
		require.NoError(t, l.DeleteRange(2, 3)) // a stored delete: Count reads the pages
		require.NoError(t, l.Close())
		require.NoError(t, db.Close())
		dropOutside(t, path, "v", "/pages", "/values")
		db, err = kvstore.Open(path, sealedOpts(kvstore.Options{Sync: kvstore.SyncOff}))
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		o, err := timelog.OpenObjects(context.Background(), db, "v", manual(timelog.Options{}), timelog.ObjectOptions[string]{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = o.Close() })
		s, err := o.Log().Snapshot()
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })

		calls := readCalls(s)
		calls["Cursor"] = func() error {
			c := s.Cursor(false)
			defer c.Close()
			require.False(t, c.First())
			return c.Err()
		}
		requireEveryMethod(t, reflect.TypeFor[*timelog.Snapshot](), calls, map[string]string{"Close": "ends it"})
		for _, n := range slices.Sorted(maps.Keys(calls)) {
			requireBoth(t, calls[n](), "ErrCorrupt", "Snapshot."+n)
		}
		_, err = o.Get(s, 1)
		requireBoth(t, err, "ErrCorrupt", "Objects.Get")
		for _, err := range o.All(s) {
			requireBoth(t, err, "ErrCorrupt", "Objects.All")
		}
		requireBoth(t, db.Update(ctx, func(tx *kvstore.Tx) error {
			_, err := o.Log().In(tx).AppendValue(4, []byte("d"))
			return err
		}), "ErrCorrupt", "Tx.AppendValue")
	})
}

// TestErrorsOfBadCalls: the conditions the log finds itself match the
// store's errors of the same condition.
func TestErrorsOfBadCalls(t *testing.T) {
	db, _ := openStore(t)
	_, err := timelog.Open(context.Background(), db, "x", timelog.Options{MemtableMaxBytes: -1})
	requireBoth(t, err, "ErrInvalidOption", "Open")
	_, err = timelog.Open(context.Background(), db, "missing", timelog.Options{ReadOnly: true})
	requireBoth(t, err, "ErrNotFound", "read-only Open of a missing log")
	// A name no log can have is refused as Open refuses it, not reported
	// missing.
	for _, bad := range []string{"", strings.Repeat("x", 241)} {
		require.ErrorIs(t, timelog.Drop(ctx, db, bad), kvstore.ErrInvalidName, "Drop %q", bad)
		require.ErrorIs(t, timelog.ForceDrop(ctx, db, bad), kvstore.ErrInvalidName, "ForceDrop %q", bad)
	}

	l := openLog(t, db, "v", manual(timelog.Options{Values: true}))
	_, err = l.AppendValue(1, make([]byte, db.MaxValueSize()+1))
	requireBoth(t, err, "ErrValueTooLarge", "AppendValue")
	_, err = l.AppendValues([]int64{1}, nil)
	requireBoth(t, err, "ErrInvalidArgument", "AppendValues")
	err = l.DeleteRange(2, 1)
	require.ErrorIs(t, err, timelog.ErrInvalidRange)
	requireBoth(t, err, "ErrInvalidArgument", "DeleteRange(2, 1)")
	s, err := l.Snapshot()
	require.NoError(t, err)
	_, err = s.Value(42)
	require.ErrorIs(t, err, timelog.ErrValueNotFound)
	requireBoth(t, err, "ErrNotFound", "Value of a missing handle")
	require.NoError(t, s.Close())

	r := openLog(t, db, "v", timelog.Options{ReadOnly: true})
	requireBoth(t, r.DeleteFrom(0), "ErrReadOnly", "a write on a read-only log")
}

// TestErrorsOfABusyStore: a flush that cannot take the store's write lock
// is ErrBusy of both packages.
func TestErrorsOfABusyStore(t *testing.T) {
	db, err := kvstore.Open(filepath.Join(t.TempDir(), "b.db"), sealedOpts(kvstore.Options{Sync: kvstore.SyncOff, BusyTimeout: 50 * time.Millisecond}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	l := openLog(t, db, "b", manual(timelog.Options{MemtableMaxBytes: 24 * 2, SealedMaxRuns: 1, Busy: timelog.BusySilent}))
	require.NoError(t, l.AppendBatch(recs(1, 1, 2, 2))) // full: sealed
	require.NoError(t, l.AppendBatch(recs(3, 3, 4, 4))) // full, the queue too
	tx, err := db.Begin(context.Background(), true)
	require.NoError(t, err)
	defer tx.Rollback()
	requireBoth(t, l.Flush(ctx), "ErrBusy", "Flush")
	_, err = l.MaintStep(ctx)
	requireBoth(t, err, "ErrBusy", "MaintStep")
}

// Open and List take the context that bounds them; a nil one is
// ErrInvalidArgument (of both packages), and nothing is created.
func TestOpenNilContext(t *testing.T) {
	db, _ := openStore(t)
	var noCtx context.Context
	_, err := timelog.Open(noCtx, db, "n", manual(timelog.Options{}))
	require.ErrorIs(t, err, timelog.ErrInvalidArgument)
	require.ErrorIs(t, err, kvstore.ErrInvalidArgument)
	_, err = timelog.List(noCtx, db)
	require.ErrorIs(t, err, kvstore.ErrInvalidArgument)
	names, err := timelog.List(context.Background(), db)
	require.NoError(t, err)
	require.Empty(t, names)
}

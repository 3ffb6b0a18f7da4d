package timelog_test

import (
	"context"
	"iter"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/internal/testutil/tempstore"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

var ctx = context.Background()

// openStore opens a new store (through sealedOpts, with SyncOff) in a fresh
// temporary directory, closed when the test ends.
func openStore(t testing.TB) (*kvstore.Store, string) {
	t.Helper()
	return tempstore.Open(t, sealedOpts(kvstore.Options{Sync: kvstore.SyncOff}))
}

func manual(o timelog.Options) timelog.Options {
	o.Maintenance = timelog.Manual
	return o
}

func openLog(t testing.TB, db *kvstore.Store, name string, o timelog.Options) *timelog.Log {
	t.Helper()
	l, err := timelog.Open(context.Background(), db, name, o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func collect(t testing.TB, seq iter.Seq2[timelog.Record, error]) []timelog.Record {
	t.Helper()
	return testutil.Drain(t, seq)
}

// drain runs MaintStep until it has nothing left to do.
func drain(t testing.TB, l *timelog.Log) {
	t.Helper()
	for i := 0; ; i++ {
		did, err := l.MaintStep(ctx)
		require.NoError(t, err)
		if !did {
			return
		}
		require.Less(t, i, 100000, "maintenance does not converge")
	}
}

func compactAll(t testing.TB, l *timelog.Log) {
	t.Helper()
	require.NoError(t, l.Flush(ctx))
	l.Compact()
	drain(t, l)
}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// sealedOpts returns o as the suite opens stores (tempstore.Options): with
// a raw key when the suite runs against encrypted stores (a read-only open
// finds the store encrypted already; a writable one encrypts a fixture
// made in the clear, as asked).
func sealedOpts(o kvstore.Options) kvstore.Options { return tempstore.Options(o) }

// hiddenRow is a row of one of a log's hidden tables, as the store holds it.
type hiddenRow struct{ key, value []byte }

// hiddenRows returns the rows of the log's hidden table name ("log/pages",
// "log/values"), copied.
func hiddenRows(t testing.TB, db *kvstore.Store, name string) []hiddenRow {
	t.Helper()
	cf, err := layer.OpenHiddenTable(ctx, db, "timelog", name)
	require.NoError(t, err)
	var rows []hiddenRow
	for e, err := range cf.All() {
		require.NoError(t, err)
		rows = append(rows, hiddenRow{slices.Clone(e.Key), slices.Clone(e.Value)})
	}
	return rows
}

// oneValueLog opens the values log "v" of db (maintenance manual) and
// appends value v at timestamp 1.
func oneValueLog(t testing.TB, db *kvstore.Store, v string) *timelog.Log {
	t.Helper()
	l := openLog(t, db, "v", manual(timelog.Options{Values: true}))
	_, err := l.AppendValue(1, []byte(v))
	require.NoError(t, err)
	return l
}

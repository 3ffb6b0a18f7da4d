package tests

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
)

// The checker of feed and data after a crash, shared by the SIGKILL loop
// (changefeed_crash_test.go) and the power-loss suite
// (powerloss_test.go).

// feedCheck checks the closed store at path after a crash: the feed
// numbers its changes 1, 2, 3, … with no gap up to the position Now
// returns, a transaction's changes are together, and replaying the feed
// from its first change gives exactly each column family's rows, as
// SQLite holds them (read without snkv's code, so that a key expired but
// not yet purged counts as the row it still is). It returns the feed's
// changes and the rows. label names the crash in failure messages.
func feedCheck(t *testing.T, path, label string) ([]changefeed.Change, map[string]map[string]string) {
	t.Helper()
	changes := feedCrashReplay(t, path, label)
	byCF := map[string][]changefeed.Change{}
	for _, c := range changes {
		byCF[c.CF] = append(byCF[c.CF], c)
	}
	held := feedCrashRows(t, path)
	for _, name := range feedCheckCFs {
		changes := byCF[name]
		// A drop takes the rows with it; the feed goes on with the name.
		for i, c := range changes {
			if c.Op == changefeed.OpDropCF {
				changes = byCF[name][i+1:]
			}
		}
		replayed := modelReplay(changes, "")
		feedCrashExplain(t, path, name, held[name], replayed)
		require.Equal(t, held[name], replayed, "%s: replaying the feed gives column family %q's rows", label, name)
	}
	return changes, held
}

// feedCheckCFs are the column families with a feed: the crash children's,
// and the one they create and drop again and again.
var feedCheckCFs = append(slices.Clone(crashCFs), crashChurnCF)

// feedCrashSetup creates the store at path with the crash children's
// column families and turns their feeds on, values kept.
func feedCrashSetup(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	for _, name := range feedCheckCFs {
		_, err := db.ColumnFamilyOrCreate(name)
		require.NoError(t, err)
		require.NoError(t, changefeed.Enable(ctx, db, name, changefeed.Options{KeepValues: true}))
	}
	require.NoError(t, db.Close())
}

// feedCrashReplay reads the whole feed of the store at path, checks its
// numbering and that each transaction's changes are together, and returns
// it.
func feedCrashReplay(t *testing.T, path, label string) []changefeed.Change {
	t.Helper()
	ctx := context.Background()
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	require.NoError(t, db.IntegrityCheck(ctx))
	end, err := changefeed.Now(ctx, db)
	require.NoError(t, err)
	r, err := changefeed.NewReader(ctx, db, changefeed.Position{}, changefeed.ReaderOptions{})
	require.NoError(t, err)
	defer r.Close()
	all := readFeed(t, r, label)
	txs := map[int64]bool{}
	for i, c := range all {
		require.EqualValues(t, i+1, c.Seq, "%s: the feed has no gap", label)
		if i == 0 || c.Tx != all[i-1].Tx {
			require.Equal(t, c.Seq, c.Tx, "%s: change %d starts a transaction", label, c.Seq)
			require.False(t, txs[c.Tx], "%s: transaction %d's changes are together", label, c.Tx)
			txs[c.Tx] = true
		}
	}
	require.EqualValues(t, len(all)+1, end.Seq, "%s: the feed ends where Now says", label)
	return all
}

// feedCrashRows returns each column family's rows as SQLite holds them in
// the closed store file at path.
func feedCrashRows(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?_pragma=busy_timeout(10000)")
	require.NoError(t, err)
	defer raw.Close()
	out := map[string]map[string]string{}
	for _, name := range feedCheckCFs {
		var n int
		require.NoError(t, raw.QueryRow(`SELECT count(*) FROM "__snkv_catalog" WHERE name = ?`, name).Scan(&n))
		if n == 0 {
			out[name] = map[string]string{} // dropped
			continue
		}
		rows, err := raw.Query(`SELECT key, value FROM "` + strings.ReplaceAll(name, `"`, `""`) + `"`)
		require.NoError(t, err)
		m := map[string]string{}
		for rows.Next() {
			var k, v []byte
			require.NoError(t, rows.Scan(&k, &v))
			m[string(k)] = string(v)
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
		out[name] = m
	}
	return out
}

// feedCrashExplain logs, when the rows held and replayed differ, every
// change of column family cf to the keys that differ (and its range
// deletes), so that a failure shows how the feed came to its rows.
func feedCrashExplain(t *testing.T, path, cf string, held, replayed map[string]string) {
	var keys []string
	for k, v := range held {
		if w, ok := replayed[k]; !ok || w != v {
			keys = append(keys, k)
		}
	}
	for k := range replayed {
		if _, ok := held[k]; !ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return
	}
	t.Helper()
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	defer db.Close()
	r, err := changefeed.NewReader(context.Background(), db, changefeed.Position{}, changefeed.ReaderOptions{Filter: changefeed.Filter{CF: cf}})
	require.NoError(t, err)
	defer r.Close()
	for _, c := range readFeed(t, r, cf) {
		for _, k := range keys {
			if string(c.Key) == k || c.Op == changefeed.OpDeleteRange {
				t.Logf("%s: seq %d tx %d at %v %s %q %q exp %v", cf, c.Seq, c.Tx, c.At.UnixMilli(), c.Op, c.Key, c.Value, c.Expiry.UnixMilli())
				break
			}
		}
	}
	t.Logf("%s: rows held and replayed differ at %q", cf, keys)
}

// readFeed reads r page by page until it is at the end of the feed and
// returns every change it read.
func readFeed(t *testing.T, r *changefeed.Reader, label string) []changefeed.Change {
	t.Helper()
	var all []changefeed.Change
	for {
		page, err := r.Read(context.Background())
		require.NoError(t, err, "%s: read the feed", label)
		if len(page) == 0 {
			return all
		}
		all = append(all, page...)
	}
}

// idleTailShare waits d in r.Next with nothing committing and returns the
// share of a core the process used meanwhile (an idle tail's cost).
func idleTailShare(t *testing.T, r *changefeed.Reader, d time.Duration) float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cpu := testutil.CPUTime()
	_, err := r.Next(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	return (testutil.CPUTime() - cpu).Seconds() / d.Seconds()
}

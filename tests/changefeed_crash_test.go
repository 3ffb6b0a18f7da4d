package tests

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/kvstore"
)

// The crash check of feed and data (issue #37): the crash suite's children
// (TestCrashChild's loop: TTL writes, batches, transactions, expiries,
// purges, column family churn, checkpoints) run on a store whose column
// families have a feed that keeps values, and are killed with SIGKILL at
// random moments, every other one with synchronous=FULL. After every kill:
//   - the feed numbers its changes 1, 2, 3, … with no gap up to the
//     position Now returns, and a transaction's changes are together;
//   - replaying the feed from its first change gives exactly each column
//     family's rows, as SQLite holds them (read without snkv's code, so
//     that a key expired but not yet purged counts as the row it still is);
//   - the store passes the crash suite's own checks (crashVerify).

// feedCrashSetup creates the store at path with the crash children's
// column families and turns their feeds on, values kept.
func feedCrashSetup(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	for _, name := range crashCFs {
		_, err := db.ColumnFamilyOrCreate(name)
		require.NoError(t, err)
		require.NoError(t, changefeed.Enable(ctx, db, name, changefeed.Options{KeepValues: true}))
	}
	require.NoError(t, db.Close())
}

// feedCrashReplay reads the whole feed of the store at path, checks its
// numbering, and returns each column family's rows as replaying it gives
// them, and how many changes it holds.
func feedCrashReplay(t *testing.T, path string, kill int) (map[string]map[string]string, int) {
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
	var all []changefeed.Change
	for {
		page, err := r.Read(ctx)
		require.NoError(t, err, "kill %d: read the feed", kill)
		if len(page) == 0 {
			break
		}
		all = append(all, page...)
	}
	require.NotEmpty(t, all)
	txs := map[int64]bool{}
	for i, c := range all {
		require.EqualValues(t, i+1, c.Seq, "kill %d: the feed has no gap", kill)
		if i == 0 || c.Tx != all[i-1].Tx {
			require.Equal(t, c.Seq, c.Tx, "kill %d: change %d starts a transaction", kill, c.Seq)
			require.False(t, txs[c.Tx], "kill %d: transaction %d's changes are together", kill, c.Tx)
			txs[c.Tx] = true
		}
	}
	require.Equal(t, end.Seq, all[len(all)-1].Seq+1, "kill %d: the feed ends where Now says", kill)
	byCF := map[string][]changefeed.Change{}
	for _, c := range all {
		byCF[c.CF] = append(byCF[c.CF], c)
	}
	out := map[string]map[string]string{}
	for _, name := range crashCFs {
		out[name] = modelReplay(byCF[name], "")
	}
	return out, len(all)
}

// feedCrashRows returns each column family's rows as SQLite holds them in
// the closed store file at path.
func feedCrashRows(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path))
	require.NoError(t, err)
	defer raw.Close()
	out := map[string]map[string]string{}
	for _, name := range crashCFs {
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

func TestChangeFeedCrashFeedAgreesWithData(t *testing.T) {
	kills, maxDelay := 16, 300*time.Millisecond
	if testing.Short() {
		kills, maxDelay = 3, 40*time.Millisecond
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	feedCrashSetup(t, path)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 37))
	seed := rng.Uint64()
	t.Logf("seed %d", seed)
	lastSeq := 0
	for i := range kills {
		var env []string
		if i%2 == 1 {
			env = append(env, crashEnvSync+"=full")
		}
		clockMs := crashStart.Add(time.Duration(i) * time.Hour).UnixMilli()
		child := startCrashChild(t, path, crashModeLoop, seed+uint64(i), clockMs, env...)
		waitCommitted(maxDelay)(i, rng, child)
		reported := crashLastSeq(t, child.Kill())
		require.Greater(t, reported, lastSeq, "kill %d: the child made progress", i)

		replayed, n := feedCrashReplay(t, path, i)
		held := feedCrashRows(t, path)
		for _, name := range crashCFs {
			feedCrashExplain(t, path, name, held[name], replayed[name])
			require.Equal(t, held[name], replayed[name], "kill %d (seed %d): replaying the feed gives column family %q's rows", i, seed, name)
		}
		lastSeq, _ = crashVerify(t, path, clockMs, reported)
		t.Logf("kill %d: sequence %d, %d changes in the feed", i, lastSeq, n)
	}
	require.Greater(t, lastSeq, 0, fmt.Sprintf("seed %d: the children committed", seed))
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
	for {
		page, err := r.Read(context.Background())
		require.NoError(t, err)
		if len(page) == 0 {
			break
		}
		for _, c := range page {
			for _, k := range keys {
				if string(c.Key) == k || c.Op == changefeed.OpDeleteRange {
					t.Logf("%s: seq %d tx %d at %v %s %q %q exp %v", cf, c.Seq, c.Tx, c.At.UnixMilli(), c.Op, c.Key, c.Value, c.Expiry.UnixMilli())
					break
				}
			}
		}
	}
	t.Logf("%s: rows held and replayed differ at %q", cf, keys)
}

package tests

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/internal/testutil"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // database/sql driver, to check the file as another tool would
)

// crashTB is what crashCheckFile needs of a *testing.T.
type crashTB interface {
	require.TestingT
	Helper()
}

// crashRecorder is a crashTB that only records a failure, to test the
// checker itself.
type crashRecorder struct{ failed bool }

func (r *crashRecorder) Errorf(string, ...any) { r.failed = true }
func (r *crashRecorder) FailNow()              { r.failed = true; runtime.Goexit() }
func (r *crashRecorder) Helper()               {}

// crashStart is the clock of the first child; each later child starts an
// hour later, so that keys of earlier runs have expired.
var crashStart = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)

// startCrashChild re-executes the test binary as a child running mode on
// the store at path.
func startCrashChild(t *testing.T, path, mode string, seed uint64, clockMs int64, env ...string) *testutil.Child {
	t.Helper()
	return testutil.StartChild(t, "TestCrashChild", append([]string{
		crashEnvPath + "=" + path,
		crashEnvMode + "=" + mode,
		crashEnvSeed + "=" + strconv.FormatUint(seed, 10),
		crashEnvClock + "=" + strconv.FormatInt(clockMs, 10),
	}, env...)...)
}

// lastSeq returns the last sequence number the child reported committed.
func crashLastSeq(t *testing.T, lines []string) int {
	t.Helper()
	last := 0
	for _, l := range lines {
		if s, ok := strings.CutPrefix(l, "seq "); ok {
			n, err := strconv.Atoi(s)
			require.NoError(t, err, l)
			last = n
		}
	}
	return last
}

// crashCheckFile checks a closed store file through database/sql, without
// snkv's code: SQLite's integrity check, then, for every column family, that
// its hidden tables exist together with their triggers, and that every key
// index row has its data row and exactly its expiry index row and back.
func crashCheckFile(t crashTB, path string) (ttlKeys int) {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?_pragma=busy_timeout(10000)")
	require.NoError(t, err)
	defer raw.Close()
	raw.SetMaxOpenConns(1)

	require.Equal(t, []string{"ok"}, sqliteIntegrity(t, path), "PRAGMA integrity_check")

	names := queryStrings(t, raw, `SELECT name FROM "__snkv_catalog"`)
	require.NotEmpty(t, names)

	exists := func(name string) bool {
		var n int
		require.NoError(t, raw.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = ?`, name).Scan(&n))
		return n > 0
	}
	keysOf := func(q string) [][]byte {
		rows, err := raw.Query(q)
		require.NoError(t, err)
		defer rows.Close()
		var out [][]byte
		for rows.Next() {
			var k []byte
			require.NoError(t, rows.Scan(&k))
			out = append(out, k)
		}
		require.NoError(t, rows.Err())
		return out
	}
	quote := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

	for _, cf := range names {
		require.True(t, exists(cf), "column family %q has its table", cf)
		hasKeys, hasExp := exists(layout.KeysPrefix+cf), exists(layout.ExpiryPrefix+cf)
		require.Equal(t, hasKeys, hasExp, "column family %q: both hidden tables or neither", cf)
		if !hasKeys {
			continue
		}
		require.True(t, exists(layout.OnUpdatePrefix+cf), "column family %q: update trigger", cf)
		require.True(t, exists(layout.OnDeletePrefix+cf), "column family %q: delete trigger", cf)

		data := map[string]bool{}
		for _, k := range keysOf(`SELECT key FROM ` + quote(cf)) {
			data[string(k)] = true
		}
		expiries := map[string]int64{}
		rows, err := raw.Query(`SELECT key, expire_ms FROM ` + quote(layout.KeysPrefix+cf))
		require.NoError(t, err)
		for rows.Next() {
			var k, e []byte
			require.NoError(t, rows.Scan(&k, &e))
			require.Len(t, e, 8, "column family %q key %q: expiry is 8 bytes", cf, k)
			expiries[string(k)] = int64(binary.BigEndian.Uint64(e))
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())

		index := keysOf(`SELECT expire_ms || key FROM ` + quote(layout.ExpiryPrefix+cf))
		require.Len(t, index, len(expiries), "column family %q: one expiry index row per key index row", cf)
		for _, ik := range index {
			exp, k, err := expiry.SplitIndexKey(ik)
			require.NoError(t, err)
			want, ok := expiries[string(k)]
			require.True(t, ok, "column family %q: expiry index row of %q has no key index row", cf, k)
			require.Equal(t, want, exp, "column family %q key %q: both indexes hold the same expiry", cf, k)
		}
		for k := range expiries {
			require.True(t, data[k], "column family %q: key index row of %q has no data row", cf, k)
		}
		ttlKeys += len(expiries)
	}
	return ttlKeys
}

// crashVerify reopens the store after a kill and checks it with snkv's own
// integrity check, the sequence number the child reported, and then the
// closed file with crashCheckFile.
func crashVerify(t *testing.T, path string, clockMs int64, lastSeq int) (seq, ttlKeys int) {
	t.Helper()
	ctx := context.Background()
	clk := kvstore.NewManualClock(time.UnixMilli(clockMs))
	db, err := kvstore.Open(path, kvstore.Options{Clock: clk})
	require.NoError(t, err)
	require.NoError(t, db.IntegrityCheck(ctx))
	for _, name := range crashCFs {
		cf, err := db.OpenColumnFamily(name)
		require.NoError(t, err)
		probs, err := cf.CheckTTL(ctx)
		require.NoError(t, err)
		require.Empty(t, probs, "column family %q", name)
	}
	if lastSeq > 0 {
		v, left, err := db.GetTTL([]byte(crashSeqKey))
		require.NoError(t, err, "the committed sequence key survives the kill")
		seq, err = strconv.Atoi(string(v))
		require.NoError(t, err)
		// Every reported commit survives; at most one more commit may have
		// happened between the commit and its report.
		require.GreaterOrEqual(t, seq, lastSeq)
		require.LessOrEqual(t, seq, lastSeq+1)
		require.Greater(t, left, time.Duration(0), "the sequence key keeps its TTL")
		require.NotEqual(t, kvstore.NoTTL, left)
	}
	// The store works after the crash: TTL writes, reads and a purge.
	cf, err := db.OpenColumnFamily("sessions")
	require.NoError(t, err)
	require.NoError(t, cf.PutTTL([]byte("after-crash"), []byte("v"), time.Second))
	clk.Advance(time.Second)
	_, err = cf.Get([]byte("after-crash"))
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	_, err = db.PurgeExpiredAll(ctx)
	require.NoError(t, err)
	require.NoError(t, db.IntegrityCheck(ctx))
	require.NoError(t, db.Close())
	return seq, crashCheckFile(t, path)
}

// crashKillLoop starts kills children of the loop mode one after another
// on one store file (env added to theirs), kills each once wait has
// returned, and checks the store after every kill (crashVerify). It
// returns, for each kill, the lines the child wrote and how many keys with
// a TTL the store held.
func crashKillLoop(t *testing.T, kills int, stream uint64, wait func(i int, rng *rand.Rand, child *testutil.Child), env ...string) (lines [][]string, ttlKeys []int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "crash.db")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), stream))
	seed := rng.Uint64()
	t.Logf("seed %d", seed)
	lastSeq := 0
	for i := range kills {
		clockMs := crashStart.Add(time.Duration(i) * time.Hour).UnixMilli()
		child := startCrashChild(t, path, crashModeLoop, seed+uint64(i), clockMs, env...)
		wait(i, rng, child)
		l := child.Kill()
		reported := crashLastSeq(t, l)
		require.Greater(t, reported, lastSeq, "kill %d: the child made progress", i)
		var n int
		lastSeq, n = crashVerify(t, path, clockMs, reported)
		t.Logf("kill %d: sequence %d, %d keys with TTL", i, lastSeq, n)
		lines, ttlKeys = append(lines, l), append(ttlKeys, n)
	}
	return lines, ttlKeys
}

// waitCommitted waits until the child is past opening the store and has
// committed, then lets it run for up to maxDelay.
func waitCommitted(maxDelay time.Duration) func(int, *rand.Rand, *testutil.Child) {
	return func(_ int, rng *rand.Rand, child *testutil.Child) {
		child.WaitLine(func(l string) bool { return strings.HasPrefix(l, "seq ") })
		time.Sleep(time.Duration(rng.Int64N(int64(maxDelay))))
	}
}

// TestCrashTTLKill runs children that do random TTL writes, expiries,
// batches, transactions and multi-batch purges on one store file, kills
// each with SIGKILL at a random moment, and checks after every kill that
// the file is sound and every key's three rows agree.
func TestCrashTTLKill(t *testing.T) {
	kills := shortOr(20, 2)
	maxDelay := shortOr(400*time.Millisecond, 50*time.Millisecond)
	lines, ttlKeys := crashKillLoop(t, kills, 1, func(i int, rng *rand.Rand, child *testutil.Child) {
		if i%3 == 2 { // aim at a multi-batch purge
			child.WaitFor("purge start")
			time.Sleep(time.Duration(rng.Int64N(int64(5 * time.Millisecond))))
			return
		}
		waitCommitted(maxDelay)(i, rng, child)
	})
	midPurge := 0
	for _, l := range lines {
		if l[len(l)-1] == "purge start" {
			midPurge++
		}
	}
	if !testing.Short() {
		require.Greater(t, slices.Max(ttlKeys), 1, "the children left TTL keys to check")
	}
	t.Logf("%d of %d kills landed inside a purge", midPurge, kills)
}

// TestCrashMixedSyncFull kills children running the mixed workload (TTL
// writes, batches, transactions, purges, column family churn, checkpoints)
// with synchronous=FULL, 200 times in the long run, and checks the store
// after every kill: sound file, hidden tables in step, and every reported
// commit present.
func TestCrashMixedSyncFull(t *testing.T) {
	cycles := shortOr(200, 3)
	maxDelay := shortOr(150*time.Millisecond, 30*time.Millisecond)
	crashKillLoop(t, cycles, 2, waitCommitted(maxDelay), crashEnvSync+"=full")
}

// A kill in the middle of a write transaction loses the transaction, first
// TTL write of a column family included, and nothing that was committed.
func TestCrashTTLBeforeAndAfterCommit(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hold.db")
	clockMs := crashStart.UnixMilli()
	child := startCrashChild(t, path, crashModeHold, 0, clockMs)
	child.WaitFor("holding")
	child.Kill()

	db, err := kvstore.Open(path, kvstore.Options{Clock: kvstore.NewManualClock(time.UnixMilli(clockMs))})
	require.NoError(t, err)
	require.NoError(t, db.IntegrityCheck(ctx))
	// Committed before the kill: present, with its TTL.
	v, left, err := db.GetTTL([]byte(crashDoneKey))
	require.NoError(t, err)
	require.Equal(t, "committed", string(v))
	require.Equal(t, time.Hour, left)
	// Written by the interrupted transaction: absent.
	_, err = db.Get([]byte(crashPendKey))
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	pending, err := db.OpenColumnFamily(crashPendingCF)
	require.NoError(t, err)
	_, err = pending.Get([]byte(crashPendKey))
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	d, err := pending.TTL([]byte("plain"))
	require.NoError(t, err)
	require.Equal(t, kvstore.NoTTL, d)
	require.False(t, pending.HasTTL(), "the interrupted first TTL write left no TTL tables")
	// TTL writes work on it now.
	require.NoError(t, pending.PutTTL([]byte("new"), []byte("v"), time.Minute))
	d, err = pending.TTL([]byte("new"))
	require.NoError(t, err)
	require.Equal(t, time.Minute, d)
	require.NoError(t, db.IntegrityCheck(ctx))
	require.NoError(t, db.Close())
	require.Equal(t, 2, crashCheckFile(t, path), "done and new carry a TTL")
}

func TestCrashCheckFileDetectsDisagreement(t *testing.T) {
	// The independent checker must catch what it is there to catch: a key
	// index row without its expiry index row.
	path := filepath.Join(t.TempDir(), "bad.db")
	db, err := kvstore.Open(path, kvstore.Options{Clock: kvstore.NewManualClock(crashStart)})
	require.NoError(t, err)
	require.NoError(t, db.PutTTL([]byte("k"), []byte("v"), time.Minute))
	require.NoError(t, db.Close())
	raw, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?_pragma=busy_timeout(10000)")
	require.NoError(t, err)
	_, err = raw.Exec(fmt.Sprintf(`DELETE FROM "%s%s"`, layout.ExpiryPrefix, kvstore.DefaultColumnFamily))
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	rec := &crashRecorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		crashCheckFile(rec, path)
	}()
	<-done
	require.True(t, rec.failed, "the checker reports the missing expiry index row")

	db, err = kvstore.Open(path, kvstore.Options{Clock: kvstore.NewManualClock(crashStart)})
	require.NoError(t, err)
	defer db.Close()
	require.ErrorIs(t, db.IntegrityCheck(context.Background()), kvstore.ErrCorrupt)
}

package tests

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// Environment of a child of TestConcurrentCreation: the store path (which
// does not exist when the child starts), and "<id>:<batches>:<start>", the
// start a wall-clock time in Unix nanoseconds that every child of a round
// waits for, so that their Opens meet.
const (
	createRaceEnvPath = "SNKV_CREATE_RACE_PATH"
	createRaceEnvArgs = "SNKV_CREATE_RACE_ARGS"
)

// createRaceKeys is how many keys one batch of a child writes: as many in
// the default column family as in the child's own one, so that a batch
// lost in part shows.
const createRaceKeys = 3

// TestConcurrentCreation starts several writer processes together on a
// path that does not exist yet, round after round. Every child must open
// the one store they make between them (none is refused, none fails), and
// every batch a child reported as committed must be in the file afterwards,
// which passes SQLite's integrity check and snkv's IntegrityCheck.
//
// Before the fix a child could read the header from before another
// child's creating commit and the schema from after it, be refused as
// "not an snkv store", and then remove the -wal and -shm the other
// children were writing through: acknowledged batches vanished and the
// file could fail its integrity check.
func TestConcurrentCreation(t *testing.T) {
	rounds, children, batches := 100, 6, 40
	if testing.Short() {
		rounds, children, batches = 20, 6, 6
	}
	for round := range rounds {
		path := filepath.Join(t.TempDir(), "new.db")
		acked := createRaceRound(t, path, round, children, batches)
		db, err := kvstore.Open(path, kvstore.Options{})
		require.NoError(t, err, "round %d", round)
		for id, n := range acked {
			cf, err := db.OpenColumnFamily(createRaceCF(id))
			require.NoError(t, err, "round %d child %d", round, id)
			for i := range n {
				for j := range createRaceKeys {
					k := createRaceKey(id, i, j)
					v, err := db.Get(k)
					require.NoError(t, err, "round %d: acknowledged %s lost", round, k)
					require.Equal(t, k, v)
					v, err = cf.Get(k)
					require.NoError(t, err, "round %d: acknowledged %s lost in %s", round, k, createRaceCF(id))
					require.Equal(t, k, v)
				}
			}
		}
		require.NoError(t, db.IntegrityCheck(context.Background()), "round %d", round)
		require.NoError(t, db.Close())
		require.Equal(t, []string{"ok"}, sqliteIntegrity(t, path), "round %d", round)
	}
}

// createRaceRound runs one round: the children, started together on path,
// and returns how many batches each acknowledged. It fails the test for a
// child that did not open the store or did not finish.
func createRaceRound(t *testing.T, path string, round, children, batches int) []int {
	t.Helper()
	// Time enough for every child to start (a test binary built with -race
	// takes up to a few hundred milliseconds on a loaded machine).
	start := time.Now().Add(500 * time.Millisecond).UnixNano()
	acked := make([]int, children)
	lines := make([][]string, children)
	errs := make([]error, children)
	var wg sync.WaitGroup
	for id := range children {
		// Fresh processes every round: the race is likeliest in a process's
		// first Open. The race detector's second of sleep at exit is
		// turned off (the children report every race as a failure).
		c := testutil.StartChild(t, "TestConcurrentCreationChild", createRaceEnvPath+"="+path,
			fmt.Sprintf("%s=%d:%d:%d", createRaceEnvArgs, id, batches, start),
			"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
		wg.Go(func() { lines[id], errs[id] = c.Wait() })
	}
	wg.Wait()
	for id := range children {
		out := strings.Join(lines[id], "\n")
		require.NoError(t, errs[id], "round %d child %d:\n%s", round, id, out)
		require.Contains(t, lines[id], "opened", "round %d child %d", round, id)
		for _, l := range lines[id] {
			if n, ok := strings.CutPrefix(l, "ack "); ok {
				if i, err := strconv.Atoi(n); err == nil && i == acked[id] {
					acked[id] = i + 1
				}
			}
		}
		require.Equal(t, batches, acked[id], "round %d child %d:\n%s", round, id, out)
	}
	return acked
}

// createRaceCF is the column family child id creates and writes.
func createRaceCF(id int) string { return "child" + strconv.Itoa(id) }

// createRaceKey is key j of batch i of child id (and its value).
func createRaceKey(id, i, j int) []byte { return fmt.Appendf(nil, "c%d/%04d/%d", id, i, j) }

// sqliteIntegrity runs PRAGMA integrity_check on the file through
// database/sql and returns its lines.
func sqliteIntegrity(t crashTB, path string) []string {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path))
	require.NoError(t, err)
	defer raw.Close()
	return queryStrings(t, raw, "PRAGMA integrity_check")
}

// TestConcurrentCreationChild is the body of a child of
// TestConcurrentCreation; run directly, it does nothing. It waits for the
// round's start, opens the store, reports "opened", then writes its
// batches, each one transaction over the default column family and its own,
// reporting "ack <i>" once batch i has committed.
func TestConcurrentCreationChild(t *testing.T) {
	testutil.ChildOnly(t)
	path := os.Getenv(createRaceEnvPath)
	var id, batches int
	var start int64
	_, err := fmt.Sscanf(os.Getenv(createRaceEnvArgs), "%d:%d:%d", &id, &batches, &start)
	require.NoError(t, err)
	// Sleep to just before the start, then spin: the Opens meet within
	// microseconds.
	at := time.Unix(0, start)
	time.Sleep(time.Until(at) - 2*time.Millisecond)
	for time.Now().Before(at) {
	}
	say := func(format string, args ...any) {
		_, _ = os.Stdout.Write(fmt.Appendf(nil, format+"\n", args...))
	}
	db, err := kvstore.Open(path, kvstore.Options{BusyTimeout: time.Minute})
	require.NoError(t, err, "child %d: open", id)
	say("opened")
	cf, err := db.ColumnFamilyOrCreate(createRaceCF(id))
	require.NoError(t, err, "child %d", id)
	for i := range batches {
		err := db.Update(context.Background(), func(tx *kvstore.Tx) error {
			for j := range createRaceKeys {
				k := createRaceKey(id, i, j)
				if err := tx.Put(k, k); err != nil {
					return err
				}
				if err := tx.CF(cf).Put(k, k); err != nil {
					return err
				}
			}
			return nil
		})
		require.NoError(t, err, "child %d batch %d", id, i)
		say("ack %d", i)
	}
	require.NoError(t, db.Close())
}

package tests

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The crash check of feed and data (issue #37): the crash suite's children
// (TestCrashChild's loop: TTL writes, batches, transactions, expiries,
// purges, column family churn, checkpoints) run on a store whose column
// families, the churned one included, have a feed that keeps values, and
// are killed with SIGKILL at
// random moments, every other one with synchronous=FULL. After every kill:
//   - the feed numbers its changes 1, 2, 3, … with no gap up to the
//     position Now returns, and a transaction's changes are together;
//   - replaying the feed from its first change gives exactly each column
//     family's rows, as SQLite holds them (read without snkv's code, so
//     that a key expired but not yet purged counts as the row it still is);
//   - the store passes the crash suite's own checks (crashVerify).
//
// The feed's checks are feedCheck's (feedcheck_test.go), which the
// power-loss suite runs too.

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

		changes, _ := feedCheck(t, path, fmt.Sprintf("kill %d (seed %d)", i, seed))
		require.NotEmpty(t, changes)
		lastSeq, _ = crashVerify(t, path, clockMs, reported)
		t.Logf("kill %d: sequence %d, %d changes in the feed", i, lastSeq, len(changes))
	}
	require.Greater(t, lastSeq, 0, fmt.Sprintf("seed %d: the children committed", seed))
}

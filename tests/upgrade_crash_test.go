package tests

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/internal/v1fixture"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

const upgradeEnvPath = "SNKV_UPGRADE_CHILD_PATH"

// TestUpgradeChild is the child process of TestUpgradeKilled: it upgrades
// the store in small batches and says when it is done. Run directly, it
// does nothing.
func TestUpgradeChild(t *testing.T) {
	testutil.ChildOnly(t)
	path := os.Getenv(upgradeEnvPath)
	db, err := kvstore.Open(path, kvstore.Options{UpgradeBatch: 40})
	require.NoError(t, err)
	fmt.Println("started")
	require.NoError(t, db.Upgrade(context.Background()))
	require.NoError(t, db.Close())
	fmt.Println("upgraded")
}

// upgradeRows is the content of the killed upgrade's version-1 store: three
// column families, one of them with TTLs.
func upgradeRows(n int) map[string][]v1fixture.Row {
	out := map[string][]v1fixture.Row{}
	for _, cf := range []string{"default", "users", "sessions"} {
		for i := range n {
			r := v1fixture.Row{Key: fmt.Appendf(nil, "%s/%05d", cf, i), Value: fmt.Appendf(nil, "%s value %d %s", cf, i, strings.Repeat("x", i%150))}
			if cf == "sessions" && i%3 > 0 {
				r.ExpMs = damageStart.Add(time.Duration(i) * time.Minute).UnixMilli()
			}
			out[cf] = append(out[cf], r)
		}
	}
	return out
}

// TestUpgradeKilled upgrades a version-1 store with TTLs in a child process
// that is killed with SIGKILL at random moments, again and again, then
// resumes the upgrade and checks that the store ends identical in content
// (values and expiries) with every row carrying a verified checksum.
func TestUpgradeKilled(t *testing.T) {
	rows, kills := 3000, 12
	if testing.Short() {
		rows, kills = 600, 3
	}
	path := filepath.Join(t.TempDir(), "v1.db")
	content := upgradeRows(rows)
	require.NoError(t, v1fixture.Create(path, damageStart.UnixMilli(), upgradeRows(rows)))
	rng := rand.New(rand.NewPCG(11, uint64(time.Now().UnixNano())))
	interrupted := 0
	for i := range kills {
		child := testutil.StartChild(t, "TestUpgradeChild", upgradeEnvPath+"="+path)
		child.WaitFor("started")
		// Let it work for a random while: the kill lands anywhere in the
		// upgrade (or after it, once it is done).
		time.Sleep(time.Duration(rng.IntN(40*(i+1))) * time.Millisecond)
		if lines, _ := child.KillIfRunning(); !slices.Contains(lines, "upgraded") {
			interrupted++
		}
	}
	t.Logf("%d of %d kills interrupted the upgrade", interrupted, kills)

	ctx := context.Background()
	db, err := kvstore.Open(path, kvstore.Options{Clock: kvstore.NewManualClock(damageStart), UpgradeBatch: 40})
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Upgrade(ctx), "the upgrade resumes")
	v, err := db.FormatVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, v, "format 2, and the TTL expiry copy for the column families with TTL")
	rep, err := db.CheckIntegrity(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Problems)
	require.Zero(t, rep.Unverified, "every row has its checksum")
	ttlRows := 0
	for name, want := range content {
		cf, err := db.OpenColumnFamily(name)
		require.NoError(t, err)
		i := 0
		for e, err := range cf.All() {
			require.NoError(t, err)
			require.Less(t, i, len(want))
			require.Equal(t, string(want[i].Key), string(e.Key))
			require.Equal(t, string(want[i].Value), string(e.Value))
			i++
		}
		require.Equal(t, len(want), i, name)
		for _, r := range want {
			d, err := cf.TTL(r.Key)
			require.NoError(t, err)
			if r.ExpMs == 0 {
				require.Equal(t, kvstore.NoTTL, d, "%s", r.Key)
			} else {
				ttlRows++
				require.Equal(t, time.UnixMilli(r.ExpMs).Sub(damageStart), d, "%s", r.Key)
			}
		}
	}
	require.EqualValues(t, 3*rows+ttlRows, rep.Verified)
}

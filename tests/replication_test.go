package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// litestreamVersion is the Litestream release the replication test runs.
const litestreamVersion = "v0.5.18"

// litestream returns the path of the pinned Litestream binary: the one
// SNKV_LITESTREAM names, else one installed earlier by this test in the
// user cache directory, else it installs it there with go install (about a
// minute, from the Go module proxy).
func litestream(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SNKV_LITESTREAM"); p != "" {
		return p
	}
	cache, err := os.UserCacheDir()
	require.NoError(t, err)
	bin := filepath.Join(cache, "snkv-tools", "litestream-"+litestreamVersion)
	exe := filepath.Join(bin, "litestream")
	if _, err := os.Stat(exe); err == nil {
		return exe
	}
	t.Logf("installing litestream %s into %s", litestreamVersion, bin)
	cmd := exec.Command("go", "install", "github.com/benbjohnson/litestream/cmd/litestream@"+litestreamVersion)
	cmd.Env = append(os.Environ(), "GOBIN="+bin, "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Skipf("cannot install litestream %s: %v\n%s", litestreamVersion, err, out)
	}
	return exe
}

// replKey is the key of the i-th acknowledged write.
func replKey(i int) []byte { return fmt.Appendf(nil, "w%07d", i) }

// restoreAndRead restores the replica into a fresh file, opens it, checks
// it, and returns how many of the writes 1..n it holds, requiring that
// they are exactly 1..count (no holes) and that it has nothing else.
func restoreAndRead(t *testing.T, ls, replica string, clk kvstore.Clock) (count int) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "restored.db")
	res, err := exec.Command(ls, "restore", "-o", out, "file://"+replica).CombinedOutput()
	require.NoError(t, err, "litestream restore: %s", res)
	db, err := kvstore.Open(out, kvstore.Options{ReadOnly: true, Clock: clk})
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.IntegrityCheck(context.Background()))
	i := 0
	for e, err := range db.All() {
		require.NoError(t, err)
		i++
		require.Equal(t, string(replKey(i)), string(e.Key), "the restored writes are a prefix, without holes")
		require.Equal(t, strconv.Itoa(i), string(e.Value))
	}
	ttlCF, err := db.OpenColumnFamily("ttl")
	require.NoError(t, err)
	n, err := ttlCF.Count()
	require.NoError(t, err)
	// Every write also put a TTL key in "ttl"; the two agree to within the
	// write in flight.
	require.InDelta(t, i, n, 1)
	return i
}

// TestReplicationLitestream replicates a live store with the real
// Litestream (pinned) to a file replica while writes go on, restores it
// elsewhere while writing and after, and checks that the restored store
// opens, passes IntegrityCheck and holds exactly the acknowledged writes
// up to the replica's last sync. It logs the measured lag.
func TestReplicationLitestream(t *testing.T) {
	if testing.Short() {
		t.Skip("replication runs in the long suite (make test-long)")
	}
	ls := litestream(t)
	dir := t.TempDir()
	live := filepath.Join(dir, "live.db")
	replica := filepath.Join(dir, "replica")
	clk := kvstore.NewManualClock(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	db, err := kvstore.Open(live, kvstore.Options{Clock: clk})
	require.NoError(t, err)
	ttlCF, err := db.CreateColumnFamily("ttl")
	require.NoError(t, err)

	cfg := filepath.Join(dir, "litestream.yml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil,
		"dbs:\n  - path: %s\n    replica:\n      type: file\n      path: %s\n      sync-interval: 200ms\n", live, replica), 0o644))
	cmd := exec.Command(ls, "replicate", "-config", cfg)
	logf, err := os.Create(filepath.Join(dir, "litestream.log"))
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(t, cmd.Start())
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
			_ = logf.Close()
		}
	}
	t.Cleanup(stop)

	// The writer: each write is one transaction putting w<i> in the
	// default column family and a TTL key in "ttl"; acked is the last
	// acknowledged i, ackAt[i] when Update returned.
	var acked atomic.Int64
	var mu sync.Mutex
	ackAt := map[int]time.Time{}
	writer := testutil.NewLoops()
	writer.Go(func(n int) bool {
		i := n + 1
		err := db.Update(context.Background(), func(tx *kvstore.Tx) error {
			if err := tx.Put(replKey(i), []byte(strconv.Itoa(i))); err != nil {
				return err
			}
			return tx.CF(ttlCF).PutTTL(replKey(i), []byte("t"), time.Hour)
		})
		if err != nil {
			t.Errorf("write %d: %v", i, err)
			return false
		}
		mu.Lock()
		ackAt[i] = time.Now()
		mu.Unlock()
		acked.Store(int64(i))
		time.Sleep(2 * time.Millisecond)
		return true
	})

	// While writing: restore a few times and measure how far behind the
	// replica is.
	time.Sleep(time.Second)
	var lags []time.Duration
	for range 3 {
		time.Sleep(700 * time.Millisecond)
		start := time.Now()
		before := int(acked.Load())
		got := restoreAndRead(t, ls, replica, clk)
		require.LessOrEqual(t, got, int(acked.Load())+1, "nothing beyond the acknowledged writes (one may be committing)")
		if got > 0 {
			mu.Lock()
			lag := start.Sub(ackAt[got])
			mu.Unlock()
			lags = append(lags, lag)
			t.Logf("restore while writing: %d of %d acknowledged writes, lag %v", got, before, lag.Round(time.Millisecond))
		}
	}
	writer.Stop()
	final := int(acked.Load())

	// Writes stopped: after a few sync intervals the replica holds every
	// acknowledged write, no more.
	deadline := time.Now().Add(15 * time.Second)
	var got int
	for {
		got = restoreAndRead(t, ls, replica, clk)
		if got == final || time.Now().After(deadline) {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	require.Equal(t, final, got, "the replica holds exactly the acknowledged writes")
	stop()
	require.NoError(t, db.IntegrityCheck(context.Background()))
	require.NoError(t, db.Close())
	require.NotEmpty(t, lags)
	t.Logf("replicated %d writes; lags while writing: %v", final, lags)
}

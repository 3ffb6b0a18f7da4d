package tests

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
	"github.com/stretchr/testify/require"
)

// testLiteFSTimelog writes a time-series log on the primary in two rounds
// and reads it on the replica through a read-only log that stays open
// between them.
func testLiteFSTimelog(t *testing.T, c *liteCluster, p, r *liteStore) {
	ctx := context.Background()
	const perRound = 5000
	appendRound := func(round int) {
		l, err := timelog.Open(context.Background(), p.db, "ticks", timelog.Options{})
		require.NoError(t, err)
		batch := make([]timelog.Record, perRound)
		for k := range batch {
			i := round*perRound + k
			batch[k] = timelog.Record{Ts: int64(1_000_000 + i*10), Handle: uint64(i)}
		}
		require.NoError(t, l.AppendBatch(batch))
		require.NoError(t, l.Flush(ctx))
		require.NoError(t, l.Close())
		pos, _, err := readPos(c.primary, liteDB)
		require.NoError(t, err)
		waitPos(t, c.replica, liteDB, pos, liteConvergeBound)
	}
	appendRound(0)
	rl, err := timelog.Open(context.Background(), r.db, "ticks", timelog.Options{})
	require.NoError(t, err)
	defer rl.Close()
	require.True(t, rl.ReadOnly(), "a log of a read-only store is read-only")
	n, err := rl.Count()
	require.NoError(t, err)
	require.EqualValues(t, perRound, n)

	appendRound(1)
	n, err = rl.Count()
	require.NoError(t, err)
	require.EqualValues(t, 2*perRound, n, "the open log sees the second round")
	k := 0
	for rec, err := range rl.All() {
		require.NoError(t, err)
		require.Equal(t, timelog.Record{Ts: int64(1_000_000 + k*10), Handle: uint64(k)}, rec)
		k++
	}
	require.Equal(t, 2*perRound, k)
	last, ok, err := rl.Max()
	require.NoError(t, err)
	require.True(t, ok)
	require.EqualValues(t, 2*perRound-1, last.Handle)
	err = rl.Append(1, 1)
	require.True(t, errors.Is(err, timelog.ErrReadOnly) || errors.Is(err, kvstore.ErrReadOnly), "append on the replica: %v", err)
	names, err := timelog.List(context.Background(), r.db)
	require.NoError(t, err)
	require.Contains(t, names, "ticks")
}

// testLiteFSCLI runs the snkv tool's read commands against the store on
// the replica's mount, and one write command, which must fail.
func testLiteFSCLI(t *testing.T, c *liteCluster, p *liteStore, written int) {
	// The tool reads the system clock, for which every workload TTL key
	// (on the manual clock at liteEpoch) has expired: give it one that
	// expires in a year.
	cliCF, err := p.db.ColumnFamilyOrCreate("cli")
	require.NoError(t, err)
	require.NoError(t, cliCF.PutExpireAt([]byte("k"), []byte("v"), time.Now().Add(365*24*time.Hour)))
	pos, _, err := readPos(c.primary, liteDB)
	require.NoError(t, err)
	waitPos(t, c.replica, liteDB, pos, liteConvergeBound)

	dir := t.TempDir()
	bin := filepath.Join(dir, "snkv")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/snkv").CombinedOutput()
	require.NoError(t, err, "go build ./cmd/snkv: %s", out)
	file := c.replica.path(liteDB)
	run := func(args ...string) (string, error) {
		var stdout, stderr strings.Builder
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err != nil {
			return stdout.String(), errors.New(err.Error() + ": " + stderr.String())
		}
		return stdout.String(), nil
	}
	ok := func(args ...string) string {
		t.Helper()
		out, err := run(args...)
		require.NoError(t, err, "snkv %s", strings.Join(args, " "))
		return out
	}

	require.Equal(t, strconv.Itoa(written), strings.TrimSpace(ok("get", file, string(wKey(written)))))
	ok("exists", file, string(wKey(1)))
	ttl := strings.TrimSpace(ok("ttl", file, "k", "--cf", "cli"))
	require.NotEmpty(t, ttl)
	t.Logf("snkv ttl on the replica: %s", ttl)
	lines := strings.Split(strings.TrimSpace(ok("scan", file, "--json")), "\n")
	require.Len(t, lines, written, "scan lists every step")
	var first struct{ Key, Value string }
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &first))
	require.Equal(t, string(wKey(1)), first.Key)
	cfs := ok("cf", "list", file)
	for _, name := range []string{"default", "ttl", "batch", "cli"} {
		require.Contains(t, cfs, name)
	}
	ok("ls", file)
	ok("stats", file)
	ok("check", file)
	export := ok("export", file, "--cf", "default")
	require.Equal(t, written, strings.Count(export, "\n"), "export of the default column family")
	backup := filepath.Join(dir, "backup.db")
	ok("backup", file, backup)
	db, err := kvstore.Open(backup, kvstore.Options{ReadOnly: true})
	require.NoError(t, err)
	n, err := db.Count()
	require.NoError(t, err)
	require.EqualValues(t, written, n, "the backup taken from the replica")
	require.NoError(t, db.Close())
	require.Equal(t, "10000", strings.TrimSpace(ok("timelog", "count", file, "ticks")))
	tail := strings.Split(strings.TrimSpace(ok("timelog", "tail", file, "ticks", "-n", "3")), "\n")
	require.NotEmpty(t, tail)

	_, err = run("put", file, "x", "y")
	require.Error(t, err, "a write command on the replica fails")
	t.Logf("snkv put on the replica: %v", err)
}

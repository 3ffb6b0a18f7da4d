package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// item is one stored key as the library reports it at a given time.
type item struct {
	key, value []byte
	expMs      int64 // 0: permanent
}

// dump reads every live key of every column family of the store at path,
// read-only, with the clock at now: the reference a round trip must
// reproduce. Empty column families appear with no items.
func dump(t testing.TB, path string, now time.Time) map[string][]item {
	t.Helper()
	db, err := kvstore.Open(path, kvstore.Options{ReadOnly: true, Clock: kvstore.NewManualClock(now)})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	names, err := db.ListColumnFamilies()
	require.NoError(t, err)
	out := map[string][]item{}
	require.NoError(t, db.View(context.Background(), func(tx *kvstore.Tx) error {
		for _, name := range names {
			cf, err := db.OpenColumnFamily(name)
			require.NoError(t, err)
			h := tx.CF(cf)
			items := []item{}
			for e, err := range h.All() {
				require.NoError(t, err)
				d, err := h.TTL(e.Key)
				require.NoError(t, err)
				it := item{key: e.Key, value: e.Value}
				if d != kvstore.NoTTL {
					it.expMs = now.UnixMilli() + d.Milliseconds()
				}
				items = append(items, it)
			}
			out[name] = items
		}
		return nil
	}))
	return out
}

// bigStore writes n keys over three column families with the library:
// "text" (UTF-8 keys and values, permanent), "binary" (random bytes, half
// of them with a TTL) and "mixed" (TTLs from minutes to days, some of them
// already expired at t0, some expiring between t0 and t0+1h), plus an empty
// column family. It returns the path and how many keys expire in
// (t0, t0+1h].
func bigStore(t testing.TB, n int) (string, int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "big.db")
	clock := kvstore.NewManualClock(t0.Add(-time.Hour))
	db, err := kvstore.Open(path, kvstore.Options{Clock: clock, Sync: kvstore.SyncOff})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	rng := rand.New(rand.NewPCG(1, 2))
	cfs := map[string]*kvstore.ColumnFamily{"default": db.Default()}
	for _, name := range []string{"text", "binary", "mixed", "Empty"} {
		cfs[name], err = db.CreateColumnFamily(name)
		require.NoError(t, err)
	}
	expiringSoon := 0
	ctx := context.Background()
	const chunk = 5000
	for base := 0; base < n; base += chunk {
		require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
			for i := base; i < min(base+chunk, n); i++ {
				switch i % 3 {
				case 0:
					k := fmt.Sprintf("user:%07d:é", i)
					v := fmt.Sprintf(`{"n":%d,"s":"line\nbreak \"quoted\""}`, i)
					if err := tx.CF(cfs["text"]).Put([]byte(k), []byte(v)); err != nil {
						return err
					}
				case 1:
					k := make([]byte, 1+rng.IntN(24))
					v := make([]byte, rng.IntN(64))
					for j := range k {
						k[j] = byte(rng.Uint32())
					}
					for j := range v {
						v[j] = byte(rng.Uint32())
					}
					k = append(k, byte(i), byte(i>>8), byte(i>>16)) // unique
					h := tx.CF(cfs["binary"])
					if i%2 == 0 {
						if err := h.PutTTL(k, v, time.Duration(2+rng.IntN(1000))*time.Hour+time.Duration(rng.IntN(1000))*time.Millisecond); err != nil {
							return err
						}
					} else if err := h.Put(k, v); err != nil {
						return err
					}
				case 2:
					k := []byte(fmt.Sprintf("m%07d", i))
					h := tx.CF(cfs["mixed"])
					// TTLs from the store's now (t0-1h): up to 30 minutes is
					// expired at t0; 61..119 minutes expires in (t0, t0+1h].
					d := time.Duration(1+rng.IntN(180)) * time.Minute
					if i%10 == 2 {
						if err := h.Put(k, []byte{}); err != nil {
							return err
						}
						continue
					}
					if d > 60*time.Minute && d <= 120*time.Minute {
						expiringSoon++
					}
					if err := h.PutTTL(k, []byte("v"), d); err != nil {
						return err
					}
				}
			}
			return nil
		}))
	}
	return path, expiringSoon
}

// TestRoundTrip exports a store and imports it into a new one: the copy
// holds exactly the same keys, values and expiries, and exporting it gives
// the same bytes. 100k keys; 10k under -short.
func TestRoundTrip(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	src, expiringSoon := bigStore(t, n)
	dir := t.TempDir()
	dumpPath := filepath.Join(dir, "dump.jsonl")

	r := cli(t, nil, "export", src, "--out", dumpPath)
	require.Equal(t, 0, r.code, r.stderr)
	want := dump(t, src, t0)
	total := 0
	for _, items := range want {
		total += len(items)
	}
	require.Equal(t, fmt.Sprintf("exported %d keys from 5 column families\n", total), r.stdout)
	require.Greater(t, total, n*8/10, "most keys are live at t0")

	// Import at the same instant: every exported key comes back exactly.
	dst := filepath.Join(dir, "copy.db")
	f, err := os.Open(dumpPath)
	require.NoError(t, err)
	r = cli(t, f, "import", dst, "--create", "--json")
	f.Close()
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []map[string]any{{"imported": float64(total), "skipped_expired": 0.0, "column_families": 5.0}}, jsonLines(t, r.stdout))
	got := dump(t, dst, t0)
	require.Equal(t, len(want), len(got))
	for name, items := range want {
		require.Equal(t, items, got[name], "column family %s", name)
	}
	r2 := cli(t, nil, "export", dst)
	require.Equal(t, 0, r2.code, r2.stderr)
	orig, err := os.ReadFile(dumpPath)
	require.NoError(t, err)
	require.True(t, bytes.Equal(orig, []byte(r2.stdout)), "exporting the copy gives the same bytes")
	r = cli(t, nil, "check", dst)
	require.Equal(t, 0, r.code, r.stderr)

	// Import an hour later: the keys that expired meanwhile are skipped and
	// counted, the others keep their exact expiry.
	later := t0.Add(time.Hour)
	dst2 := filepath.Join(dir, "later.db")
	r = cliAt(t, later, bytes.NewReader(orig), "import", dst2, "--create", "--batch", "777", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []map[string]any{{"imported": float64(total - expiringSoon), "skipped_expired": float64(expiringSoon), "column_families": 5.0}}, jsonLines(t, r.stdout))
	want = dump(t, src, later)
	got = dump(t, dst2, later)
	for name, items := range want {
		require.Equal(t, items, got[name], "column family %s", name)
	}
}

// TestRoundTripLargeValues exports a store the library wrote with
// MaxValueSize 64 MiB, with values of 20 and 30 MiB: the export says the
// size its import needs, import refuses it without --max-value-size, and
// with it reproduces the store exactly.
func TestRoundTripLargeValues(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "large.db")
	db, err := kvstore.Open(src, kvstore.Options{MaxValueSize: 64 << 20})
	require.NoError(t, err)
	random := make([]byte, 30<<20)
	_, _ = rand.NewChaCha8([32]byte{5, 6}).Read(random)
	require.NoError(t, db.Put([]byte("zeros"), make([]byte, 20<<20)))
	require.NoError(t, db.Put([]byte("random"), random))
	require.NoError(t, db.Put([]byte("small"), []byte("s")))
	require.NoError(t, db.Close())

	out := filepath.Join(dir, "large.jsonl")
	r := cli(t, nil, "export", src, "--out", out)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "--max-value-size 30MiB", "the export names what its import needs")

	dst := filepath.Join(dir, "copy.db")
	f, err := os.Open(out)
	require.NoError(t, err)
	r = cli(t, f, "import", dst, "--create")
	require.NoError(t, f.Close())
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "--max-value-size")

	r = cli(t, nil, "import", dst, "--create", "--in", out, "--max-value-size", "30MiB")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, dump(t, src, t0), dump(t, dst, t0))
}

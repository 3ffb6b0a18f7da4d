package kvstore_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// The benchmarks of encryption at rest: each operation on a store in the
// clear and on an encrypted one (raw key), side by side in one run, so
// that the ratio is read off one output (docs/benchmarks.md).

const encBenchKeys = 20000

// encSides are the two stores each benchmark compares.
var encSides = []struct {
	name string
	enc  *kvstore.Encryption
}{
	{"clear", nil},
	{"sealed", &kvstore.Encryption{Key: bytes.Repeat([]byte{0x42}, 32)}},
}

func encBenchKey(i int) []byte {
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k, uint64(i)*0x9E3779B97F4A7C15)
	binary.BigEndian.PutUint64(k[8:], uint64(i))
	return k
}

// openEncBench opens a store of encBenchKeys values of valLen bytes,
// checkpointed.
func openEncBench(b *testing.B, enc *kvstore.Encryption, valLen int) *kvstore.Store {
	b.Helper()
	s := openAt(b, filepath.Join(b.TempDir(), "enc.db"), kvstore.Options{Encryption: enc})
	val := bytes.Repeat([]byte("v"), valLen)
	require.NoError(b, s.Update(context.Background(), func(tx *kvstore.Tx) error {
		for i := range encBenchKeys {
			if err := tx.Put(encBenchKey(i), val); err != nil {
				return err
			}
		}
		return nil
	}))
	_, err := s.Checkpoint(context.Background(), kvstore.CheckpointTruncate)
	require.NoError(b, err)
	return s
}

// BenchmarkEncryption compares Get, Exists, a batch of 1,000 Puts, full scans
// (copying and borrowing) with and without encryption, on 100-byte values;
// and Get and scans on 1 KiB values.
func BenchmarkEncryption(b *testing.B) {
	if kvstore.SealedSuite() {
		b.Skip("compares against stores in the clear")
	}
	ctx := context.Background()
	for _, side := range encSides {
		s := openEncBench(b, side.enc, 100)
		cf := s.Default()
		benchEncReads(b, cf, "100", side.name)
		b.Run("Batch1000/"+side.name, func(b *testing.B) {
			val := bytes.Repeat([]byte("w"), 100)
			round := 0
			for b.Loop() {
				// A new value each round: SQLite skips writing a cell that
				// is overwritten with the same bytes, which the clear side
				// would otherwise get for free.
				binary.BigEndian.PutUint64(val, uint64(round))
				var batch kvstore.Batch
				for j := range 1000 {
					batch.Put(encBenchKey((round*1000+j)%encBenchKeys), val)
				}
				if err := cf.Apply(ctx, &batch); err != nil {
					b.Fatal(err)
				}
				round++
			}
			b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "puts/s")
		})
	}
	for _, side := range encSides {
		benchEncReads(b, openEncBench(b, side.enc, 1024).Default(), "1K", side.name)
	}
}

// benchEncReads runs Get and the full scans of cf, values of size.
func benchEncReads(b *testing.B, cf *kvstore.ColumnFamily, size, side string) {
	b.Run("Get"+size+"/"+side, func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := cf.Get(encBenchKey(i % encBenchKeys)); err != nil {
				b.Fatal(err)
			}
			i += 7919
		}
	})
	// Exists reads no value, so it opens nothing: its cost should not
	// depend on the encryption.
	b.Run("Exists"+size+"/"+side, func(b *testing.B) {
		i := 0
		for b.Loop() {
			if ok, err := cf.Exists(encBenchKey(i % encBenchKeys)); err != nil || !ok {
				b.Fatal(ok, err)
			}
			i += 7919
		}
	})
	for _, borrow := range []bool{false, true} {
		name := "ScanCopy" + size + "/"
		if borrow {
			name = "ScanBorrow" + size + "/"
		}
		b.Run(name+side, func(b *testing.B) {
			for b.Loop() {
				encScanAll(b, cf, borrow)
			}
			b.ReportMetric(float64(b.N*encBenchKeys)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkEncryptionOpen measures Open of an encrypted store with a
// password at DefaultKDF and LightKDF, beside the key derivation alone
// (an Open with the wrong password costs the derivation and nothing
// else): Open should cost the derivation plus an ordinary Open.
func BenchmarkEncryptionOpen(b *testing.B) {
	for _, kdf := range []struct {
		name string
		kdf  kvstore.KDF
	}{{"default", kvstore.DefaultKDF}, {"light", kvstore.LightKDF}} {
		path := filepath.Join(b.TempDir(), "open.db")
		enc := &kvstore.Encryption{Password: []byte("a long enough passphrase"), KDF: kdf.kdf}
		s, err := kvstore.Open(path, kvstore.Options{Encryption: enc})
		require.NoError(b, err)
		require.NoError(b, s.Default().Put([]byte("k"), []byte("v")))
		require.NoError(b, s.Close())
		b.Run("Open/"+kdf.name, func(b *testing.B) {
			for b.Loop() {
				s, err := kvstore.Open(path, kvstore.Options{Encryption: enc})
				if err != nil {
					b.Fatal(err)
				}
				_ = s.Close()
			}
		})
		b.Run("WrongPassword/"+kdf.name, func(b *testing.B) {
			bad := &kvstore.Encryption{Password: []byte("not the passphrase")}
			for b.Loop() {
				if _, err := kvstore.Open(path, kvstore.Options{Encryption: bad}); err == nil {
					b.Fatal("opened")
				}
			}
		})
		b.Run("OpenClear", func(b *testing.B) {
			p := filepath.Join(b.TempDir(), "clear.db")
			s, err := kvstore.Open(p, kvstore.Options{})
			require.NoError(b, err)
			require.NoError(b, s.Close())
			for b.Loop() {
				s, err := kvstore.Open(p, kvstore.Options{})
				if err != nil {
					b.Fatal(err)
				}
				_ = s.Close()
			}
		})
	}
}

// BenchmarkEncryptionConvert measures converting a store of 100,000
// 100-byte values in place: encrypt, re-key, remove.
func BenchmarkEncryptionConvert(b *testing.B) { benchConvert(b, false) }

// BenchmarkEncryptionConvertFeed is BenchmarkEncryptionConvert with a
// feed that keeps the values: each conversion converts the 100,000 rows
// and the 100,000 kept values of the change log, and the rate counts both.
func BenchmarkEncryptionConvertFeed(b *testing.B) { benchConvert(b, true) }

// benchConvert times Encrypt, Rekey and RemoveEncryption of a store of
// 100,000 rows, with feed a change feed keeping their values (each
// conversion then converts twice as many values, and the rate counts them).
func benchConvert(b *testing.B, feed bool) {
	if kvstore.SealedSuite() {
		b.Skip("starts from a store in the clear")
	}
	const n = 100000
	values := float64(n)
	if feed {
		values *= 2
	}
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		s := openAt(b, filepath.Join(b.TempDir(), "conv.db"), kvstore.Options{})
		if feed {
			require.NoError(b, changefeed.Enable(ctx, s, "default", changefeed.Options{KeepValues: true}))
		}
		val := bytes.Repeat([]byte("c"), 100)
		require.NoError(b, s.Update(ctx, func(tx *kvstore.Tx) error {
			for i := range n {
				if err := tx.Put(encBenchKey(i), val); err != nil {
					return err
				}
			}
			return nil
		}))
		b.StartTimer()
		for _, step := range []struct {
			name string
			fn   func() error
		}{
			{"encrypt", func() error { return s.Encrypt(ctx, kvstore.Encryption{Key: bytes.Repeat([]byte{1}, 32)}) }},
			{"rekey", func() error { return s.Rekey(ctx, kvstore.Encryption{Key: bytes.Repeat([]byte{2}, 32)}) }},
			{"remove", func() error { return s.RemoveEncryption(ctx) }},
		} {
			start := time.Now()
			require.NoError(b, step.fn())
			b.ReportMetric(values/time.Since(start).Seconds(), step.name+"-values/s")
		}
		b.StopTimer()
		require.NoError(b, s.Close())
		b.StartTimer()
	}
}

// encScanStores holds the stores BenchmarkEncryptionScanPair reads, by
// value size and side, built once for every -count round.
var encScanStores = map[string]*kvstore.Store{}

// encScanDirs are the directories of encScanStores, which TestMain removes
// once every benchmark has run (about 60 MB a run).
var encScanDirs []string

// removeEncScanStores closes encScanStores and removes their files.
func removeEncScanStores() {
	for _, s := range encScanStores {
		_ = s.Close()
	}
	for _, dir := range encScanDirs {
		_ = os.RemoveAll(dir)
	}
}

// BenchmarkEncryptionScanPair measures the target of a full scan of
// encrypted values against the same scan in the clear, paired: every
// iteration scans the store in the clear, then the encrypted one, so that
// both sides see the same machine, and the ratio is taken over the sums.
// Reported per scan of the 20,000 rows: each side's wall time (ms) and CPU
// time (cpu-ms), and sealed/clear of both.
func BenchmarkEncryptionScanPair(b *testing.B) {
	if kvstore.SealedSuite() {
		b.Skip("compares against stores in the clear")
	}
	for _, size := range []struct {
		name string
		n    int
	}{{"100", 100}, {"1K", 1024}} {
		for _, side := range encSides {
			if encScanStores[size.name+side.name] == nil {
				dir, err := os.MkdirTemp("", "encscan")
				require.NoError(b, err)
				encScanDirs = append(encScanDirs, dir)
				s, err := kvstore.Open(filepath.Join(dir, "enc.db"), kvstore.Options{Encryption: side.enc})
				require.NoError(b, err)
				val := bytes.Repeat([]byte("v"), size.n)
				require.NoError(b, s.Update(context.Background(), func(tx *kvstore.Tx) error {
					for i := range encBenchKeys {
						if err := tx.Put(encBenchKey(i), val); err != nil {
							return err
						}
					}
					return nil
				}))
				_, err = s.Checkpoint(context.Background(), kvstore.CheckpointTruncate)
				require.NoError(b, err)
				encScanStores[size.name+side.name] = s
			}
		}
		for _, borrow := range []bool{false, true} {
			mode := "copy"
			if borrow {
				mode = "borrow"
			}
			clear, sealed := encScanStores[size.name+"clear"].Default(), encScanStores[size.name+"sealed"].Default()
			b.Run(size.name+"/"+mode, func(b *testing.B) {
				scan := func(cf *kvstore.ColumnFamily) (wall, cpu time.Duration) {
					start, c0 := time.Now(), int64(testutil.CPUTime())
					encScanAll(b, cf, borrow)
					return time.Since(start), time.Duration(int64(testutil.CPUTime()) - c0)
				}
				var cw, cc, sw, sc time.Duration
				for b.Loop() {
					w, c := scan(clear)
					cw, cc = cw+w, cc+c
					w, c = scan(sealed)
					sw, sc = sw+w, sc+c
				}
				per := func(d time.Duration) float64 { return float64(d) / 1e6 / float64(b.N) }
				b.ReportMetric(per(cw), "clear-ms")
				b.ReportMetric(per(sw), "sealed-ms")
				b.ReportMetric(float64(sw)/float64(cw), "sealed/clear")
				if cc > 0 {
					b.ReportMetric(per(cc), "clear-cpu-ms")
					b.ReportMetric(per(sc), "sealed-cpu-ms")
					b.ReportMetric(float64(sc)/float64(cc), "sealed/clear-cpu")
				}
			})
		}
	}
}

// encScanAll scans cf's encBenchKeys rows, copied or borrowed.
func encScanAll(b *testing.B, cf *kvstore.ColumnFamily, borrow bool) {
	n := 0
	for _, err := range cf.Scan(kvstore.IterOptions{Borrow: borrow}) {
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	if n != encBenchKeys {
		b.Fatalf("%d rows", n)
	}
}

// BenchmarkEncryptionExistsWAL measures Exists as BenchmarkSNKVWorkload's
// existence checks meet it: a store of SNKV's benchmark rows (SNKV_BENCH_RECORDS,
// default 1,000,000, written in batches of 1,000), then its 10,000 random
// updates and 5,000 random deletes in a transaction each, then random
// Exists, in the clear and encrypted. "wal" reads through the WAL those
// two commits leave (about 13,000-14,000 frames, none copied into the
// file yet, as in the workload), "settled" after a checkpoint has copied
// it. Besides ns/op it reports checks per second of the process's CPU
// time, and "settled" what that checkpoint cost: copy-cpu-ms (the
// process's CPU time, user and system) and copy-frames (the WAL frames it
// copied). The stores have no background checkpoint
// (WALAutoCheckpoint -1), so that no pass copies the WAL between the two
// and the checkpoint always copies the whole of it. SNKV_BENCH_CACHE sets
// Options.CacheSize (bytes; 0 keeps the default) to see what a larger
// page cache does.
func BenchmarkEncryptionExistsWAL(b *testing.B) {
	if kvstore.SealedSuite() {
		b.Skip("compares against stores in the clear")
	}
	ctx := context.Background()
	n := snkvRecords()
	key := func(i int) []byte { return snkvText("key_", i, "") }
	cache, _ := strconv.Atoi(os.Getenv("SNKV_BENCH_CACHE"))
	for _, side := range encSides {
		s := openAt(b, filepath.Join(b.TempDir(), "exists.db"), kvstore.Options{Encryption: side.enc, CacheSize: cache, WALAutoCheckpoint: -1})
		for i := 0; i < n; i += snkvBatch {
			require.NoError(b, s.Update(ctx, func(tx *kvstore.Tx) error {
				for j := i; j < min(i+snkvBatch, n); j++ {
					if err := tx.Put(key(j), snkvText("value_", j, "_with_some_additional_data_to_make_it_realistic")); err != nil {
						return err
					}
				}
				return nil
			}))
		}
		_, err := s.Checkpoint(ctx, kvstore.CheckpointTruncate)
		require.NoError(b, err)
		rng := rand.New(rand.NewPCG(1, 2))
		require.NoError(b, snkvUpdate(ctx, s, rng, n))
		require.NoError(b, snkvDelete(ctx, s, rng, n))
		for _, state := range []string{"wal", "settled"} {
			var copyCPU time.Duration
			var copied int64
			if state == "settled" {
				c := testutil.CPUTime()
				res, err := s.Checkpoint(ctx, kvstore.CheckpointPassive)
				copyCPU = testutil.CPUTime() - c
				require.NoError(b, err)
				require.False(b, res.Busy)
				copied = res.Checkpointed
			}
			b.Run(state+"/"+side.name, func(b *testing.B) {
				c := testutil.CPUTime()
				for b.Loop() {
					if _, err := s.Exists(key(rng.IntN(n))); err != nil {
						b.Fatal(err)
					}
				}
				if d := testutil.CPUTime() - c; d > 0 {
					b.ReportMetric(float64(b.N)/d.Seconds(), "ops/cpu-s")
				}
				if copied > 0 {
					b.ReportMetric(float64(copyCPU)/1e6, "copy-cpu-ms")
					b.ReportMetric(float64(copied), "copy-frames")
				}
			})
		}
	}
}

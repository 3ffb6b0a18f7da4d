// Command peers measures snkv beside the stores a Go program would pick
// instead, each engine in a process of its own, one workload per run:
//
//	peers -engine snkv|bbolt|buntdb|badger|sql -work get|scan|prefix|purge|purge1tx|syncfull|bulk|ttlbulk|ttlget -dir DIR
//
// get: 200,000 random 16-byte keys with 100-byte values are loaded in
// batches of 1,000, then read back at random, from one goroutine and from
// two. purge (snkv and sql): the same load with every other key given a
// TTL that has passed when the load ends, then every expired key removed
// in transactions of 256 keys (purge1tx: in one transaction). syncfull
// (snkv and sql): single-put commits with every commit synced (snkv's
// SyncFull, SQLite's synchronous=FULL). bulk (snkv, bbolt, buntdb, badger):
// every key written in one transaction through each engine's bulk write
// (snkv: one Batch and Apply; badger: one WriteBatch, its bulk loader, as
// one transaction of 200,000 entries is over its size limit);
// ttlbulk (snkv, buntdb, badger): the same with every key given a TTL of
// one hour; ttlget (snkv, buntdb, badger): the load of get with every key
// given a TTL of one hour, then get's reads. scan: the load of get, then
// full ordered scans of every key, each key and value copied into memory
// the program owns (snkv: All(); bbolt: a cursor; buntdb: Ascend; badger:
// an iterator with ValueCopy; sql: a SELECT ... ORDER BY key read into
// []byte), and for snkv and sql the same lending the rows (snkv:
// Options.Borrow; sql: sql.RawBytes), reported as scan-borrow-keys/s.
// prefix: 200,000 16-byte keys in groups of 100 that share their first 8
// bytes (a random group number; the other 8 random), loaded in random
// order as get loads, then prefix scans of random groups (each visits 100
// keys), every key and value copied as scan copies, and for the engines
// that lend rows the same lent (prefix-borrow). sql is database/sql with
// modernc.org/sqlite, the driver snkv runs on, with prepared statements:
// for purge, a data table and an expiry index, as a program would lay out
// TTLs on SQLite by hand.
//
// scan and prefix also report their rate per second of the process's CPU
// time (metrics ending in /cpu-s), steadier on a busy machine.
//
// It prints one line per figure: "<engine> <work> <metric> <value>". The
// module is separate from snkv's so that snkv gains no dependency.
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/tidwall/buntdb"
	bolt "go.etcd.io/bbolt"
	_ "modernc.org/sqlite"
)

var (
	engine = flag.String("engine", "snkv", "snkv, bbolt, buntdb, badger or sql")
	work   = flag.String("work", "get", "get, scan, prefix, purge, purge1tx, syncfull, bulk, ttlbulk or ttlget")
	dir    = flag.String("dir", os.TempDir(), "where the store is made (a fresh directory under it)")
	keys   = flag.Int("keys", 200_000, "keys loaded")
	reads  = flag.Int("reads", 1_000_000, "random reads per pass (get)")
	syncs  = flag.Int("commits", 2_000, "single-put commits (syncfull)")
	scans  = flag.Int("scans", 20, "full scans (scan)")
	prefs  = flag.Int("prefixes", 20_000, "prefix scans (prefix)")
	prof   = flag.String("cpuprofile", "", "write a CPU profile of the timed part (not the load) to this file")
)

const (
	valueSize  = 100
	loadBatch  = 1_000
	purgeBatch = 256
)

func main() {
	flag.Parse()
	d, err := os.MkdirTemp(*dir, "peers")
	check(err)
	defer os.RemoveAll(d)
	path := filepath.Join(d, "store")
	s, ok := open[*engine]
	if !ok {
		fail("unknown engine %q", *engine)
	}
	st := s(path, *work == "syncfull")
	defer st.close()
	ks := randomKeys(*keys)
	if *work == "prefix" {
		ks = groupedKeys(*keys)
	}
	defer profile()()
	switch *work {
	case "get", "ttlget":
		if *work == "ttlget" {
			t := ttlOf(st)
			val := make([]byte, valueSize)
			for i := 0; i < len(ks); i += loadBatch {
				check(t.putTTL(ks[i:min(i+loadBatch, len(ks))], val, time.Hour))
			}
		} else {
			load(st, ks, nil)
		}
		startProfile()
		for _, g := range []int{1, 2} {
			report(*work+"-%dg-ops/s", g, float64(*reads)/timeReads(st, ks, g).Seconds())
		}
	case "scan":
		load(st, ks, nil)
		sc := scannerOf(st)
		startProfile()
		timeScans("scan", len(ks), func() (int, error) { return sc.scan(false) })
		if b, ok := sc.(borrowScanner); ok {
			timeScans("scan-borrow", len(ks), func() (int, error) { return b.scan(true) })
		}
	case "prefix":
		load(st, ks, nil)
		sc := scannerOf(st)
		rng := rand.New(rand.NewPCG(3, 4))
		ps := make([][]byte, *prefs)
		for i := range ps {
			ps[i] = ks[rng.IntN(len(ks))][:groupPrefix]
		}
		startProfile()
		timePrefixes("prefix", ps, func(p []byte) (int, error) { return sc.prefix(p, false) })
		if _, ok := sc.(borrowScanner); ok {
			timePrefixes("prefix-borrow", ps, func(p []byte) (int, error) { return sc.prefix(p, true) })
		}
	case "bulk", "ttlbulk":
		val := make([]byte, valueSize)
		startProfile()
		start := time.Now()
		if *work == "ttlbulk" {
			check(ttlOf(st).putTTL(ks, val, time.Hour))
		} else {
			check(st.put(ks, val))
		}
		report(*work+"-keys/s", 0, float64(len(ks))/time.Since(start).Seconds())
	case "purge", "purge1tx":
		p, ok := st.(purger)
		if !ok {
			fail("%s has no TTL purge", *engine)
		}
		load(st, ks, p)
		p.expire()
		startProfile()
		start := time.Now()
		n := p.purge(*work == "purge1tx")
		if n != len(ks)/2 {
			fail("purged %d keys, want %d", n, len(ks)/2)
		}
		report("purge-keys/s", 0, float64(n)/time.Since(start).Seconds())
	case "syncfull":
		val := make([]byte, valueSize)
		startProfile()
		start := time.Now()
		for i := range *syncs {
			check(st.put([][]byte{ks[i%len(ks)]}, val))
		}
		report("syncfull-commits/s", 0, float64(*syncs)/time.Since(start).Seconds())
	default:
		fail("unknown work %q", *work)
	}
}

var profFile *os.File

// startProfile starts the CPU profile, if one was asked for.
func startProfile() {
	if *prof == "" {
		return
	}
	f, err := os.Create(*prof)
	check(err)
	check(pprof.StartCPUProfile(f))
	profFile = f
}

// profile returns what stops the profile at the end of main.
func profile() func() {
	return func() {
		if profFile != nil {
			pprof.StopCPUProfile()
			check(profFile.Close())
		}
	}
}

func report(metric string, g int, v float64) {
	if g > 0 {
		metric = fmt.Sprintf(metric, g)
	}
	fmt.Printf("%s %s %s %.0f\n", *engine, *work, metric, v)
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "peers: "+format+"\n", args...)
	os.Exit(1)
}

func randomKeys(n int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	ks := make([][]byte, n)
	for i := range ks {
		k := make([]byte, 16)
		binary.BigEndian.PutUint64(k, rng.Uint64())
		binary.BigEndian.PutUint64(k[8:], uint64(i))
		ks[i] = k
	}
	return ks
}

// Keys of the prefix work: groups of groupSize that share groupPrefix bytes.
const (
	groupSize   = 100
	groupPrefix = 8
)

// groupedKeys returns n 16-byte keys (n a multiple of groupSize) in groups
// of groupSize sharing their first groupPrefix bytes, in random order.
func groupedKeys(n int) [][]byte {
	if n%groupSize != 0 {
		fail("-keys must be a multiple of %d for prefix", groupSize)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	ks := make([][]byte, n)
	var group uint64
	for i := range ks {
		if i%groupSize == 0 {
			group = rng.Uint64()
		}
		k := make([]byte, 16)
		binary.BigEndian.PutUint64(k, group)
		binary.BigEndian.PutUint64(k[8:], rng.Uint64())
		ks[i] = k
	}
	rng.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
	return ks
}

// timePrefixes runs a prefix scan of each of ps, each visiting groupSize
// keys, and reports scans/s, by the clock and per CPU second.
func timePrefixes(name string, ps [][]byte, scan func(p []byte) (int, error)) {
	n := 0
	start, cpu := time.Now(), cpuTime()
	for _, p := range ps {
		m, err := scan(p)
		check(err)
		n += m
	}
	d, c := time.Since(start), cpuTime()-cpu
	if want := len(ps) * groupSize; n != want {
		fail("prefix scans visited %d keys, want %d", n, want)
	}
	report(name+"-scans/s", 0, float64(len(ps))/d.Seconds())
	report(name+"-scans/cpu-s", 0, float64(len(ps))/c.Seconds())
}

// timeScans runs *scans full scans of n keys each and reports keys/s, by
// the clock and per second of the process's CPU time (user and system,
// every thread: the collector's work included), which a busy machine
// disturbs less.
func timeScans(name string, n int, scan func() (int, error)) {
	start, cpu := time.Now(), cpuTime()
	for range *scans {
		m, err := scan()
		check(err)
		if m != n {
			fail("scan visited %d keys, want %d", m, n)
		}
	}
	d, c := time.Since(start), cpuTime()-cpu
	report(name+"-keys/s", 0, float64(n**scans)/d.Seconds())
	report(name+"-keys/cpu-s", 0, float64(n**scans)/c.Seconds())
}

// cpuTime returns the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// load writes every key in batches; with p, every other key gets a TTL.
func load(st store, ks [][]byte, p purger) {
	val := make([]byte, valueSize)
	for i := 0; i < len(ks); i += loadBatch {
		b := ks[i:min(i+loadBatch, len(ks))]
		if p != nil {
			check(p.putHalfTTL(b, val))
		} else {
			check(st.put(b, val))
		}
	}
}

// timeReads reads len(ks)-sized random picks, *reads in all, split over g
// goroutines.
func timeReads(st store, ks [][]byte, g int) time.Duration {
	var wg sync.WaitGroup
	start := time.Now()
	for w := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for range *reads / g {
				if err := st.get(ks[rng.IntN(len(ks))]); err != nil {
					fail("get: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// store is one engine.
type store interface {
	put(ks [][]byte, val []byte) error // one transaction
	get(k []byte) error                // the value must be there
	close()
}

// ttlStore is an engine with per-key TTLs: putTTL writes ks in one
// transaction, each expiring after d.
type ttlStore interface {
	putTTL(ks [][]byte, val []byte, d time.Duration) error
}

func ttlOf(st store) ttlStore {
	t, ok := st.(ttlStore)
	if !ok {
		fail("%s has no TTL", *engine)
	}
	return t
}

// purger is an engine with TTLs: putHalfTTL gives every other key of a batch
// a TTL of one minute, expire moves time past it.
type purger interface {
	putHalfTTL(ks [][]byte, val []byte) error
	expire()
	purge(oneTx bool) int
}

var open = map[string]func(path string, durable bool) store{
	"snkv":   openSnkv,
	"bbolt":  openBolt,
	"buntdb": openBunt,
	"badger": openBadger,
	"sql":    openSQL,
}

type snkv struct {
	db  *kvstore.Store
	clk *kvstore.ManualClock
}

func openSnkv(path string, durable bool) store {
	clk := kvstore.NewManualClock(time.Now())
	opts := kvstore.Options{Clock: clk}
	if durable {
		opts.Sync = kvstore.SyncFull
	}
	db, err := kvstore.Open(path, opts)
	check(err)
	return &snkv{db: db, clk: clk}
}

func (s *snkv) put(ks [][]byte, val []byte) error {
	if len(ks) == 1 {
		return s.db.Put(ks[0], val)
	}
	var b kvstore.Batch // snkv's bulk write, as badger's WriteBatch is badger's
	for _, k := range ks {
		b.Put(k, val)
	}
	return s.db.Apply(context.Background(), &b)
}

func (s *snkv) get(k []byte) error {
	_, err := s.db.Get(k)
	return err
}

func (s *snkv) close() { check(s.db.Close()) }

// putHalfTTL gives every other key a TTL of one minute (purge's load).
func (s *snkv) putHalfTTL(ks [][]byte, val []byte) error {
	return s.db.Update(context.Background(), func(tx *kvstore.Tx) error {
		for i, k := range ks {
			var err error
			if i%2 == 0 {
				err = tx.PutTTL(k, val, time.Minute)
			} else {
				err = tx.Put(k, val)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *snkv) putTTL(ks [][]byte, val []byte, d time.Duration) error {
	var b kvstore.Batch
	for _, k := range ks {
		b.PutTTL(k, val, d)
	}
	return s.db.Apply(context.Background(), &b)
}

func (s *snkv) expire() { s.clk.Advance(2 * time.Minute) }

func (s *snkv) purge(oneTx bool) int {
	ctx := context.Background()
	if !oneTx {
		n, err := s.db.PurgeExpired(ctx) // in transactions of kvstore.PurgeBatch keys
		check(err)
		return n
	}
	var n int
	check(s.db.Update(ctx, func(tx *kvstore.Tx) error {
		var err error
		n, err = tx.PurgeExpired(ctx)
		return err
	}))
	return n
}

type boltStore struct{ db *bolt.DB }

var bucket = []byte("kv")

func openBolt(path string, _ bool) store {
	db, err := bolt.Open(path, 0o600, nil)
	check(err)
	check(db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucket)
		return err
	}))
	return &boltStore{db: db}
}

func (s *boltStore) put(ks [][]byte, val []byte) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		for _, k := range ks {
			if err := b.Put(k, val); err != nil {
				return err
			}
		}
		return nil
	})
}

// get copies the value, as snkv's Get returns a copy the caller owns
// (KeepAlive keeps the compiler from dropping a copy nobody reads).
func (s *boltStore) get(k []byte) error {
	return s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucket).Get(k)
		if v == nil {
			return fmt.Errorf("missing key %x", k)
		}
		runtime.KeepAlive(append([]byte(nil), v...))
		return nil
	})
}

func (s *boltStore) close() { check(s.db.Close()) }

type buntStore struct{ db *buntdb.DB }

func openBunt(path string, _ bool) store {
	db, err := buntdb.Open(path)
	check(err)
	return &buntStore{db: db}
}

func (s *buntStore) put(ks [][]byte, val []byte) error {
	v := string(val)
	return s.db.Update(func(tx *buntdb.Tx) error {
		for _, k := range ks {
			if _, _, err := tx.Set(string(k), v, nil); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *buntStore) get(k []byte) error {
	return s.db.View(func(tx *buntdb.Tx) error {
		v, err := tx.Get(string(k))
		runtime.KeepAlive([]byte(v))
		return err
	})
}

func (s *buntStore) close() { check(s.db.Close()) }

func (s *buntStore) putTTL(ks [][]byte, val []byte, d time.Duration) error {
	v := string(val)
	opts := &buntdb.SetOptions{Expires: true, TTL: d}
	return s.db.Update(func(tx *buntdb.Tx) error {
		for _, k := range ks {
			if _, _, err := tx.Set(string(k), v, opts); err != nil {
				return err
			}
		}
		return nil
	})
}

type badgerStore struct{ db *badger.DB }

func openBadger(path string, durable bool) store {
	db, err := badger.Open(badger.DefaultOptions(path).WithLogger(nil).WithSyncWrites(durable))
	check(err)
	return &badgerStore{db: db}
}

func (s *badgerStore) put(ks [][]byte, val []byte) error {
	return s.write(ks, val, 0)
}

func (s *badgerStore) putTTL(ks [][]byte, val []byte, d time.Duration) error {
	return s.write(ks, val, d)
}

// write writes ks through one WriteBatch, each with TTL d (0: none).
func (s *badgerStore) write(ks [][]byte, val []byte, d time.Duration) error {
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	for _, k := range ks {
		e := badger.NewEntry(k, val)
		if d > 0 {
			e = e.WithTTL(d)
		}
		if err := wb.SetEntry(e); err != nil {
			return err
		}
	}
	return wb.Flush()
}

func (s *badgerStore) get(k []byte) error {
	return s.db.View(func(tx *badger.Txn) error {
		it, err := tx.Get(k)
		if err != nil {
			return err
		}
		v, err := it.ValueCopy(nil)
		runtime.KeepAlive(v)
		return err
	})
}

func (s *badgerStore) close() { check(s.db.Close()) }

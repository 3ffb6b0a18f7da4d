package tests

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/internal/v1fixture"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TestFastPathWritesWhatSQLWrites runs one random sequence of writes (puts
// of new and existing keys, empty and overflowing values, deletes, batches,
// keys of 1 byte to 2 KiB) on two stores, one with the B-tree fast path and
// one with every write as an SQL statement, and requires identical tables:
// the same keys, values and checksums, with the same SQLite storage
// classes, and both files clean under PRAGMA integrity_check and
// CheckIntegrity.
func TestFastPathWritesWhatSQLWrites(t *testing.T) {
	fastPathOn(t)
	ctx := context.Background()
	dir := t.TempDir()
	fast, slow, clk := fastAndSQLStores(t, dir)
	cfs := map[*kvstore.Store][]*kvstore.ColumnFamily{}
	for _, db := range []*kvstore.Store{fast, slow} {
		users, err := db.CreateColumnFamily("users")
		require.NoError(t, err)
		cfs[db] = []*kvstore.ColumnFamily{db.Default(), users}
	}
	// A third column family with TTL, where every write must take SQL.
	for _, db := range []*kvstore.Store{fast, slow} {
		ttlcf, err := db.CreateColumnFamily("expiring")
		require.NoError(t, err)
		require.NoError(t, ttlcf.PutTTL([]byte("seed"), []byte("x"), time.Hour))
		cfs[db] = append(cfs[db], ttlcf)
	}

	rng := rand.New(rand.NewPCG(17, 4))
	key := func() []byte {
		switch rng.IntN(10) {
		case 0:
			return []byte{byte(rng.IntN(256))}
		case 1:
			return bytes.Repeat([]byte{byte(rng.IntN(256))}, 1+rng.IntN(2048))
		}
		return fmt.Appendf(nil, "k%05d", rng.IntN(3000))
	}
	value := func() []byte {
		switch rng.IntN(8) {
		case 0:
			return nil
		case 1:
			return bytes.Repeat([]byte{byte(rng.IntN(256))}, 1000+rng.IntN(20000)) // overflow pages
		}
		return fmt.Appendf(nil, "v%d-%x", rng.IntN(1e6), rng.Uint64())
	}
	type op struct {
		cf   int
		del  bool
		ttl  time.Duration // a PutTTL
		k, v []byte
	}
	for round := range 60 {
		ops := make([]op, 1+rng.IntN(200))
		for i := range ops {
			ops[i] = op{cf: rng.IntN(3), del: rng.IntN(6) == 0, k: key(), v: value()}
			if !ops[i].del && rng.IntN(3) == 0 {
				ops[i].ttl = time.Duration(1+rng.IntN(120)) * time.Second
			}
		}
		batch := round%3 == 2
		for _, db := range []*kvstore.Store{fast, slow} {
			engine.SetFastPath(db == fast)
			before := engine.FastWrites()
			err := db.Update(ctx, func(tx *kvstore.Tx) error {
				if batch {
					var b kvstore.Batch
					for _, o := range ops {
						switch {
						case o.del:
							b.Delete(o.k)
						case o.ttl > 0:
							b.PutTTL(o.k, o.v, o.ttl)
						default:
							b.Put(o.k, o.v)
						}
					}
					return tx.CF(cfs[db][0]).Apply(ctx, &b)
				}
				for _, o := range ops {
					h := tx.CF(cfs[db][o.cf])
					if o.del {
						if err := h.Delete(o.k); err != nil && err != kvstore.ErrNotFound {
							return err
						}
						continue
					}
					put := h.Put(o.k, o.v)
					if o.ttl > 0 {
						put = h.PutTTL(o.k, o.v, o.ttl)
					}
					if put != nil {
						return put
					}
				}
				return nil
			})
			require.NoError(t, err)
			if round%4 == 3 {
				// Purges, in batches and in the transaction, of what the
				// clock's advance expired.
				for _, cf := range cfs[db] {
					_, err := cf.PurgeExpiredN(ctx, 50)
					require.NoError(t, err)
				}
				require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
					_, err := tx.CF(cfs[db][1]).PurgeExpired(ctx)
					return err
				}))
			}
			if db == slow {
				require.Equal(t, before, engine.FastWrites(), "the SQL side wrote below SQL")
			}
		}
		clk.Advance(time.Duration(rng.IntN(30)) * time.Second)
	}
	engine.SetFastPath(true)
	require.Greater(t, engine.FastWrites(), uint64(2000), "the fast side's puts went below SQL")
	closeClean(t, fast, slow)
	for _, table := range []string{"default", "users", "expiring",
		"__snkv_ttl_k__default", "__snkv_ttl_e__default", "__snkv_ttl_k__users", "__snkv_ttl_e__users",
		"__snkv_ttl_k__expiring", "__snkv_ttl_e__expiring"} {
		a := dumpTable(t, filepath.Join(dir, "fast.db"), table)
		b := dumpTable(t, filepath.Join(dir, "sql.db"), table)
		require.NotEmpty(t, a, table)
		require.Equal(t, b, a, "table %q differs between the paths", table)
	}
}

// dumpTable reads every row of table with its storage classes, after
// checking the file with PRAGMA integrity_check.
func dumpTable(t *testing.T, path, table string) []string {
	t.Helper()
	db, err := engine.Open(engine.Config{Path: path, ReadOnly: true, Journal: "WAL", Sync: "NORMAL",
		BusyTimeout: time.Second, MaxReaders: 1})
	require.NoError(t, err)
	defer db.Close()
	var out []string
	require.NoError(t, db.WithReader(context.Background(), func(c *engine.Conn) error {
		rows, err := c.Query(context.Background(), `SELECT integrity_check FROM pragma_integrity_check`)
		require.NoError(t, err)
		for rows.Next() {
			require.Equal(t, "ok", string(rows.Bytes(0)))
		}
		require.NoError(t, rows.Close())
		// The columns but the expiry copy, a cache that the fast path
		// writes and SQL leaves absent (CheckIntegrity checks that every
		// copy is its key index row).
		rows, err = c.Query(context.Background(), `SELECT name <> ?2 FROM pragma_table_info(?1) ORDER BY cid`, table, layout.CopyColumn)
		require.NoError(t, err)
		var cols []bool
		for rows.Next() {
			cols = append(cols, rows.Int(0) != 0)
		}
		require.NoError(t, rows.Close())
		// Every column with its storage class, in key order.
		rows, err = c.Query(context.Background(), `SELECT * FROM `+engine.Quote(table)+` ORDER BY 1, 2`)
		require.NoError(t, err)
		for rows.Next() {
			var line strings.Builder
			for i, keep := range cols {
				if !keep {
					continue
				}
				fmt.Fprintf(&line, "%d:%x:%d ", rows.Kind(i), rows.Bytes(i), rows.Int(i))
			}
			out = append(out, line.String())
		}
		return rows.Close()
	}))
	return out
}

// TestFastPathScansReadWhatSQLReads compares scans with random bounds
// (inclusive and exclusive, open, prefixes), in both orders, read from the
// B-tree and read with SQL, on keys and values of every size.
func TestFastPathScansReadWhatSQLReads(t *testing.T) {
	fastPathOn(t)
	db, err := kvstore.Open(filepath.Join(t.TempDir(), "s.db"), kvstore.Options{})
	require.NoError(t, err)
	defer db.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	var b kvstore.Batch
	for i := range 3000 {
		k := fmt.Appendf(nil, "%04d", rng.IntN(10000))
		if i%50 == 0 {
			k = append(k, bytes.Repeat([]byte{0xff}, rng.IntN(3000))...)
		}
		v := fmt.Appendf(nil, "v%d", i)
		switch i % 20 {
		case 0:
			v = nil
		case 1:
			v = bytes.Repeat([]byte{byte(i)}, 5000+rng.IntN(9000))
		}
		b.Put(k, v)
	}
	require.NoError(t, db.Apply(context.Background(), &b))
	read := func(opts kvstore.IterOptions, fast bool) (keys, values []string) {
		engine.SetFastPath(fast)
		defer engine.SetFastPath(true)
		before := engine.FastScans()
		for e, err := range db.Scan(opts) {
			require.NoError(t, err)
			keys = append(keys, string(e.Key))
			values = append(values, string(e.Value))
		}
		if !fast {
			require.Equal(t, before, engine.FastScans(), "the SQL side read below SQL")
		}
		return keys, values
	}
	fastBefore := engine.FastScans()
	for range 200 {
		opts := randomScan(rng)
		fk, fv := read(opts, true)
		sk, sv := read(opts, false)
		require.Equal(t, sk, fk, "keys of %+v", opts)
		require.Equal(t, sv, fv, "values of %+v", opts)
	}
	// Cursors: a seek, then steps both ways (each step past a turn
	// repositions with an exclusive bound).
	walk := func(fast bool, seek []byte, steps []bool) []string {
		out, err := walkCursor(t, db, fast, seek, steps)
		require.NoError(t, err)
		return out
	}
	for range 100 {
		seek, steps := randomWalk(rng, 30)
		require.Equal(t, walk(false, seek, steps), walk(true, seek, steps), "walk from %s", seek)
	}
	require.Greater(t, engine.FastScans(), fastBefore+100, "scans went through the fast path")
}

// A transaction that gives a column family its TTL tables (and their
// triggers) and then writes it again must take SQL: the fast path would
// not fire the triggers that drop the key's TTL.
func TestFastPathSeesSchemaChangesOfItsOwnTx(t *testing.T) {
	db, err := kvstore.Open(filepath.Join(t.TempDir(), "t.db"), kvstore.Options{})
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Update(context.Background(), func(tx *kvstore.Tx) error {
		require.NoError(t, tx.Put([]byte("a"), []byte("1")))               // no TTL tables yet
		require.NoError(t, tx.PutTTL([]byte("b"), []byte("2"), time.Hour)) // creates them
		require.NoError(t, tx.Put([]byte("b"), []byte("3")))               // must drop b's TTL
		require.NoError(t, tx.Delete([]byte("a")))                         // must go through the trigger
		require.NoError(t, tx.PutTTL([]byte("c"), []byte("4"), time.Hour))
		return nil
	}))
	d, err := db.TTL([]byte("b"))
	require.NoError(t, err)
	require.Equal(t, kvstore.NoTTL, d, "the put after PutTTL made b permanent")
	rep, err := db.CheckIntegrity(context.Background())
	require.NoError(t, err)
	require.Empty(t, rep.Problems)
	var keys []string
	for e, err := range db.All() {
		require.NoError(t, err)
		keys = append(keys, string(e.Key))
	}
	require.Equal(t, []string{"b", "c"}, keys)
}

// TestFastPathPointReadsReadWhatSQLReads runs the same point reads (Get,
// Exists, GetMany, GetTTL, in a read transaction, in a write transaction
// and outside any) read from the B-trees and read with SQL, on every table
// layout a store can hold: format 2 with and without TTL tables, a store
// in the version-1 format (no checksum column; with TTL tables in the
// version-1 layout, which the fast path leaves to SQL), and an encrypted
// store. Keys are present, missing, empty-valued, overflowing, with a TTL
// that is live or past.
func TestFastPathPointReadsReadWhatSQLReads(t *testing.T) {
	fastPathOn(t)
	ctx := context.Background()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(8, 28))
	var keys [][]byte
	for i := range 400 {
		keys = append(keys, overflowEvery(rng, fmt.Appendf(nil, "k%04d", i), i, 37, 0xfe, 1500))
	}
	value := func(i int) []byte { return sizedValue(rng, i, 11, 20000) }
	type layout struct {
		name  string
		open  func(t *testing.T) (*kvstore.Store, *kvstore.ManualClock)
		fast  bool // the fast path reads it
		ttl   bool // some keys have a TTL
		fresh bool // every key written here
	}
	newStore := func(t *testing.T, name string, opts kvstore.Options) (*kvstore.Store, *kvstore.ManualClock) {
		clk := kvstore.NewManualClock(fastEpoch)
		opts.Clock = clk
		db, err := kvstore.Open(filepath.Join(dir, name), opts)
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		return db, clk
	}
	v1 := func(name string, withTTL bool) func(t *testing.T) (*kvstore.Store, *kvstore.ManualClock) {
		return func(t *testing.T) (*kvstore.Store, *kvstore.ManualClock) {
			var rows []v1fixture.Row
			for i, k := range keys {
				if i%5 == 4 {
					continue // missing
				}
				r := v1fixture.Row{Key: k, Value: value(i)}
				if withTTL && i%3 == 0 {
					r.ExpMs = fastEpoch.Add(time.Duration(i%7-3) * time.Minute).UnixMilli()
				}
				rows = append(rows, r)
			}
			path := filepath.Join(dir, name)
			require.NoError(t, v1fixture.Create(path, fastEpoch.UnixMilli(), map[string][]v1fixture.Row{"default": rows}))
			clk := kvstore.NewManualClock(fastEpoch)
			db, err := kvstore.Open(path, kvstore.Options{Clock: clk})
			require.NoError(t, err)
			t.Cleanup(func() { _ = db.Close() })
			return db, clk
		}
	}
	layouts := []layout{
		{name: "format 2", fast: true, fresh: true, open: func(t *testing.T) (*kvstore.Store, *kvstore.ManualClock) {
			return newStore(t, "f2.db", kvstore.Options{})
		}},
		{name: "format 2 with TTL", fast: true, ttl: true, fresh: true, open: func(t *testing.T) (*kvstore.Store, *kvstore.ManualClock) {
			return newStore(t, "f2ttl.db", kvstore.Options{})
		}},
		{name: "encrypted, with TTL", fast: true, ttl: true, fresh: true, open: func(t *testing.T) (*kvstore.Store, *kvstore.ManualClock) {
			return newStore(t, "enc.db", kvstore.Options{Encryption: &kvstore.Encryption{Key: bytes.Repeat([]byte{7}, 32)}})
		}},
		{name: "version 1", fast: true, open: v1("v1.db", false)},
		{name: "version 1 with TTL", ttl: true, open: v1("v1ttl.db", true)},
	}
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			db, clk := l.open(t)
			if l.fresh {
				var b kvstore.Batch
				for i, k := range keys {
					switch {
					case i%5 == 4: // missing
					case l.ttl && i%3 == 0:
						b.PutTTL(k, value(i), time.Duration(i%7+1)*time.Minute)
					default:
						b.Put(k, value(i))
					}
				}
				require.NoError(t, db.Apply(ctx, &b))
				clk.Advance(3*time.Minute + time.Second) // some TTLs are past now
			}
			probe := append([][]byte{[]byte("absent"), {0}}, keys...)
			// One pass of every read; the store's state does not change
			// between the two passes but for expired keys that a read
			// removes, which both passes report missing.
			read := func(fast bool) []string {
				engine.SetFastPath(fast)
				defer engine.SetFastPath(true)
				before := engine.FastReads()
				var out []string
				note := func(what string, v []byte, err error) {
					out = append(out, fmt.Sprintf("%s %x %v", what, v, err))
				}
				for _, k := range probe {
					v, err := db.Get(k)
					note("get", v, err)
					ok, err := db.Exists(k)
					note(fmt.Sprint("exists ", ok), nil, err)
					v, d, err := db.GetTTL(k)
					note(fmt.Sprint("getttl ", d), v, err)
				}
				vs, err := db.GetMany(probe)
				require.NoError(t, err)
				for _, v := range vs {
					note("many", v, nil)
				}
				for _, update := range []bool{false, true} {
					run := db.View
					if update {
						run = db.Update
					}
					require.NoError(t, run(ctx, func(tx *kvstore.Tx) error {
						for _, k := range probe {
							v, err := tx.Get(k)
							note(fmt.Sprint("tx get ", update), v, err)
							ok, err := tx.Exists(k)
							note(fmt.Sprint("tx exists ", update, ok), nil, err)
						}
						return nil
					}))
				}
				switch {
				case !fast:
					require.Equal(t, before, engine.FastReads(), "the SQL side read below SQL")
				case l.fast:
					require.Greater(t, engine.FastReads(), before+uint64(len(probe)), "the fast side read below SQL")
				default:
					require.Equal(t, before, engine.FastReads(), "a layout the fast path does not read was read below SQL")
				}
				return out
			}
			require.Equal(t, read(false), read(true))
			// Once more, now that the reads have removed what expired.
			require.Equal(t, read(false), read(true))
		})
	}
}

// A handle that read its column family below SQL never reads, below SQL
// either, a column family of the same name that another process created
// after dropping its own: the schema change sends the read to SQL, which
// checks the catalog.
func TestFastPathPointReadsSeeARecreatedColumnFamily(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	defer db.Close()
	cf, err := db.CreateColumnFamily("users")
	require.NoError(t, err)
	require.NoError(t, cf.Put([]byte("k"), []byte("old")))
	before := engine.FastReads()
	for range 5 {
		v, err := cf.Get([]byte("k"))
		require.NoError(t, err)
		require.Equal(t, "old", string(v))
	}
	if engine.FastPath {
		require.Greater(t, engine.FastReads(), before, "reads went below SQL")
	}

	other, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	require.NoError(t, other.DropColumnFamily("users"))
	again, err := other.CreateColumnFamily("users")
	require.NoError(t, err)
	require.NoError(t, again.Put([]byte("k"), []byte("new")))
	require.NoError(t, other.Close())

	for range 3 {
		_, err = cf.Get([]byte("k"))
		require.ErrorIs(t, err, kvstore.ErrNotFound, "the old handle reads the new column family")
		_, err = cf.Exists([]byte("k"))
		require.ErrorIs(t, err, kvstore.ErrNotFound)
	}
	fresh, err := db.OpenColumnFamily("users")
	require.NoError(t, err)
	v, err := fresh.Get([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, "new", string(v))
}

// Rows appended in key order below SQL fill their pages: when the last
// leaf splits, SQLite is given the bulk-load hint CREATE INDEX uses, which
// keeps the left pages full instead of spreading the rows over the last
// last pages. The same load through SQL takes about an eighth more pages
// (714 against 631 for these 20,000 rows); the rows are the same.
func TestFastPathAppendsFillPages(t *testing.T) {
	fastPathOn(t)
	ctx := context.Background()
	dir := t.TempDir()
	pages := func(name string, fast bool) int64 {
		engine.SetFastPath(fast)
		defer engine.SetFastPath(true)
		path := filepath.Join(dir, name)
		db, err := kvstore.Open(path, kvstore.Options{})
		require.NoError(t, err)
		for batch := range 20 {
			require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
				for i := range 1000 {
					if err := tx.Put(fmt.Appendf(nil, "key_%08d", batch*1000+i), bytes.Repeat([]byte{'v'}, 100)); err != nil {
						return err
					}
				}
				return nil
			}))
		}
		require.NoError(t, db.Close())
		db2, err := engine.Open(engine.Config{Path: path, ReadOnly: true, Journal: "WAL", Sync: "NORMAL", BusyTimeout: time.Second, MaxReaders: 1})
		require.NoError(t, err)
		defer db2.Close()
		var n int64
		require.NoError(t, db2.WithReader(ctx, func(c *engine.Conn) error {
			n, err = c.QueryInt(ctx, `PRAGMA page_count`)
			return err
		}))
		return n
	}
	fast, slow := pages("fast.db", true), pages("sql.db", false)
	t.Logf("pages: %d below SQL, %d through SQL", fast, slow)
	require.Less(t, float64(fast), 0.92*float64(slow))
	require.Equal(t, dumpTable(t, filepath.Join(dir, "sql.db"), "default"), dumpTable(t, filepath.Join(dir, "fast.db"), "default"))
}

// fastAndSQLStores opens fast.db and sql.db in dir, closed when the test
// ends, on one manual clock at fastEpoch: the store the fast path writes
// and the one every write goes to as SQL.
func fastAndSQLStores(t *testing.T, dir string) (fast, slow *kvstore.Store, clk *kvstore.ManualClock) {
	t.Helper()
	clk = kvstore.NewManualClock(fastEpoch)
	open := func(name string) *kvstore.Store {
		db, err := kvstore.Open(filepath.Join(dir, name), kvstore.Options{Clock: clk})
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	return open("fast.db"), open("sql.db"), clk
}

// closeClean requires that each store passes CheckIntegrity with every
// row verified, and closes it.
func closeClean(t *testing.T, stores ...*kvstore.Store) {
	t.Helper()
	for _, db := range stores {
		rep, err := db.CheckIntegrity(context.Background())
		require.NoError(t, err)
		require.Empty(t, rep.Problems)
		require.Zero(t, rep.Unverified)
		require.NoError(t, db.Close())
	}
}

// fastPathOn skips the test in a build without the fast path (there is one
// path only), and turns the fast path on for it.
func fastPathOn(t *testing.T) {
	t.Helper()
	if !engine.FastPath {
		t.Skip("built with snkv_nofast: there is one path only")
	}
	was := engine.SetFastPath(true)
	t.Cleanup(func() { engine.SetFastPath(was) })
}

// TestFastPathLargePurgeDeletesWhatSQLDeletes purges, inside one
// transaction and in batches, more expired keys than the fast path takes
// off the expiry index at a time (by their bytes: keys of up to 4 KiB), in
// a random key order (with -short, fewer: one chunk), with some key index
// rows changed in SQL so that they disagree with their expiry entry (those
// keys must stay), on a store with the fast path and one without: the same
// keys go, the same tables remain.
func TestFastPathLargePurgeDeletesWhatSQLDeletes(t *testing.T) {
	fastPathOn(t)
	ctx := context.Background()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(37, 1))
	type kv struct {
		k   []byte
		ttl time.Duration
	}
	n := 6000
	if testing.Short() {
		n = 800 // one chunk: the sort and the disagreeing rows, not the chunks
	}
	var keys []kv
	for i := range n {
		k := fmt.Appendf(nil, "%016x", rng.Uint64())
		if i%2 == 0 {
			// Keys of up to 4 KiB: the expired ones add up to more than
			// the fast path holds in memory at a time.
			k = append(k, bytes.Repeat([]byte{byte(i)}, 1+rng.IntN(4096))...)
		}
		ttl := time.Duration(1+rng.IntN(3600)) * time.Second // expired at fastEpoch+2h
		if i%4 == 0 {
			ttl += 4 * time.Hour // still live
		}
		keys = append(keys, kv{k, ttl})
	}
	for _, side := range []string{"fast", "sql"} {
		for _, mode := range []string{"tx", "batches"} {
			engine.SetFastPath(side == "fast")
			clk := kvstore.NewManualClock(fastEpoch)
			path := filepath.Join(dir, side+"-"+mode+".db")
			db, err := kvstore.Open(path, kvstore.Options{Clock: clk})
			require.NoError(t, err)
			require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
				for _, e := range keys {
					if err := tx.PutTTL(e.k, []byte("v"), e.ttl); err != nil {
						return err
					}
				}
				return nil
			}))
			require.NoError(t, db.Close())
			// Disagreeing key index rows: their keys must survive the purge.
			raw, err := engine.Open(engine.Config{Path: path, Journal: "WAL", Sync: "NORMAL", BusyTimeout: time.Second, MaxReaders: 1})
			require.NoError(t, err)
			require.NoError(t, raw.WithWriter(ctx, func(c *engine.Conn) error {
				for i := 1; i < len(keys); i += 499 {
					if _, err := c.Exec(ctx, `UPDATE "__snkv_ttl_k__default" SET expire_ms = x'00000000000000ff', crc = 4294967296 WHERE key = ?1`, keys[i].k); err != nil {
						return err
					}
				}
				return nil
			}))
			require.NoError(t, raw.Close())
			db, err = kvstore.Open(path, kvstore.Options{Clock: clk})
			require.NoError(t, err)
			clk.Set(fastEpoch.Add(2 * time.Hour))
			before := engine.FastWrites()
			var purged int
			if mode == "tx" {
				require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
					purged, err = tx.PurgeExpired(ctx)
					return err
				}))
			} else {
				purged, err = db.PurgeExpired(ctx)
				require.NoError(t, err)
			}
			require.Greater(t, purged, n/2, "%s/%s", side, mode)
			if side == "sql" {
				require.Equal(t, before, engine.FastWrites(), "the SQL side purged below SQL")
			} else {
				require.Greater(t, engine.FastWrites(), before, "the fast side purged below SQL")
			}
			require.NoError(t, db.Close())
		}
	}
	engine.SetFastPath(true)
	for _, mode := range []string{"tx", "batches"} {
		for _, table := range []string{"default", "__snkv_ttl_k__default", "__snkv_ttl_e__default"} {
			a := dumpTable(t, filepath.Join(dir, "fast-"+mode+".db"), table)
			b := dumpTable(t, filepath.Join(dir, "sql-"+mode+".db"), table)
			require.NotEmpty(t, a, table)
			require.Equal(t, b, a, "%s: table %q differs between the paths", mode, table)
		}
	}
}

package tests

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"iter"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/v1fixture"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TestFastPathTTLScansReadWhatSQLReads compares scans and cursor walks read
// from the B-trees with the same read with SQL, on every table layout a
// store can hold (format 2 with and without TTL tables, encrypted, version
// 1 with and without TTL tables, a version-1 store upgraded), with keys
// without a TTL, with a live one and with one past, keys and values that
// overflow their pages, and rows written with plain SQL as another tool
// would: a key index row with no data row, a data row with no key index
// row, a key given a TTL by its key index row alone. Every scan form runs
// (bounds inclusive, exclusive and open, prefixes, both orders, borrowed
// and copied rows, in a read and in a write transaction and outside any),
// at two clocks, so that keys expire between the rounds.
func TestFastPathTTLScansReadWhatSQLReads(t *testing.T) {
	fastPathOn(t)
	ctx := context.Background()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(34, 2))
	var keys [][]byte
	for i := range 600 {
		keys = append(keys, overflowEvery(rng, fmt.Appendf(nil, "%04d", i*7%10000), i, 41, 0xfd, 2500))
	}
	value := func(i int) []byte { return sizedValue(rng, i, 13, 12000) }
	// ttlOf is key i's TTL from fastEpoch (0: none): some expire before the
	// first round, some between the rounds, some never.
	ttlOf := func(i int) time.Duration {
		if i%3 != 0 {
			return 0
		}
		return time.Duration(1+i%9) * time.Minute
	}
	type tableLayout struct {
		name   string
		open   func(t *testing.T) (*kvstore.Store, *kvstore.ManualClock, string)
		v2     bool // the raw rows are written in the format-2 shape
		ttl    bool // some keys have a TTL
		fast   bool // the fast path reads it
		upsert bool // the keys are written here, through the store
		opts   kvstore.Options
	}
	newStore := func(t *testing.T, name string, opts kvstore.Options) (*kvstore.Store, *kvstore.ManualClock, string) {
		clk := kvstore.NewManualClock(fastEpoch)
		opts.Clock = clk
		path := filepath.Join(dir, name)
		db, err := kvstore.Open(path, opts)
		require.NoError(t, err)
		return db, clk, path
	}
	v1 := func(name string, withTTL, upgrade bool) func(t *testing.T) (*kvstore.Store, *kvstore.ManualClock, string) {
		return func(t *testing.T) (*kvstore.Store, *kvstore.ManualClock, string) {
			var rows []v1fixture.Row
			for i, k := range keys {
				r := v1fixture.Row{Key: k, Value: value(i)}
				if d := ttlOf(i); withTTL && d > 0 {
					r.ExpMs = fastEpoch.Add(d).UnixMilli()
				}
				rows = append(rows, r)
			}
			path := filepath.Join(dir, name)
			require.NoError(t, v1fixture.Create(path, fastEpoch.UnixMilli(), map[string][]v1fixture.Row{"default": rows}))
			clk := kvstore.NewManualClock(fastEpoch)
			db, err := kvstore.Open(path, kvstore.Options{Clock: clk})
			require.NoError(t, err)
			if upgrade {
				require.NoError(t, db.Upgrade(ctx))
			}
			return db, clk, path
		}
	}
	encrypted := kvstore.Options{Encryption: &kvstore.Encryption{Key: bytes.Repeat([]byte{7}, 32)}}
	layouts := []tableLayout{
		{name: "format 2", v2: true, fast: true, upsert: true, open: func(t *testing.T) (*kvstore.Store, *kvstore.ManualClock, string) {
			return newStore(t, "f2.db", kvstore.Options{})
		}},
		{name: "format 2 with TTL", v2: true, ttl: true, fast: true, upsert: true, open: func(t *testing.T) (*kvstore.Store, *kvstore.ManualClock, string) {
			return newStore(t, "f2ttl.db", kvstore.Options{})
		}},
		{name: "encrypted, with TTL", v2: true, ttl: true, fast: true, upsert: true, opts: encrypted, open: func(t *testing.T) (*kvstore.Store, *kvstore.ManualClock, string) {
			return newStore(t, "enc.db", encrypted)
		}},
		{name: "version 1", fast: true, open: v1("v1.db", false, false)},
		{name: "version 1 with TTL", ttl: true, open: v1("v1ttl.db", true, false)},
		{name: "upgraded from version 1, with TTL", v2: true, ttl: true, fast: true, open: v1("up.db", true, true)},
	}
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			db, clk, path := l.open(t)
			if l.upsert {
				var b kvstore.Batch
				for i, k := range keys {
					if d := ttlOf(i); l.ttl && d > 0 {
						b.PutTTL(k, value(i), d)
					} else {
						b.Put(k, value(i))
					}
				}
				require.NoError(t, db.Apply(ctx, &b))
			}
			require.NoError(t, db.Close())
			if l.opts.Encryption == nil {
				// (An encrypted store refuses a value the shell wrote.)
				writeForeignTTLRows(t, path, fastEpoch, l.v2, l.ttl)
			}
			opts := l.opts
			opts.Clock = clk
			db, err := kvstore.Open(path, opts)
			require.NoError(t, err)
			defer db.Close()

			read := func(opts kvstore.IterOptions, fast bool, how int) []string {
				engine.SetFastPath(fast)
				defer engine.SetFastPath(true)
				var out []string
				scan := func(seq func(kvstore.IterOptions) iter.Seq2[kvstore.Entry, error]) {
					for e, err := range seq(opts) {
						if err != nil {
							out = append(out, "error: "+err.Error())
							break
						}
						out = append(out, fmt.Sprintf("%x=%d:%08x", e.Key, len(e.Value), crc32.ChecksumIEEE(e.Value)))
					}
				}
				switch how {
				case 0:
					scan(db.Scan)
				default:
					run := db.View
					if how == 2 {
						run = db.Update
					}
					require.NoError(t, run(ctx, func(tx *kvstore.Tx) error {
						scan(tx.Scan)
						return nil
					}))
				}
				return out
			}
			walk := func(fast bool, seek []byte, steps []bool) []string {
				out, err := walkCursor(t, db, fast, seek, steps)
				if err != nil {
					out = append(out, "error: "+err.Error())
				}
				return out
			}
			for round, at := range []time.Duration{4 * time.Minute, 8 * time.Minute} {
				clk.Set(fastEpoch.Add(at))
				fastBefore := engine.FastScans()
				full := read(kvstore.IterOptions{}, false, 0)
				require.Greater(t, len(full), len(keys)/2)
				require.NotContains(t, full[len(full)-1], "error")
				require.Equal(t, full, read(kvstore.IterOptions{}, true, 0), "round %d: a full scan", round)
				require.Equal(t, reversed(full), read(kvstore.IterOptions{Reverse: true}, true, 0), "round %d: a full scan in reverse", round)
				for range 80 {
					opts := randomScan(rng)
					how := rng.IntN(3)
					sqlSide := engine.FastScans()
					want := read(opts, false, how)
					require.Equal(t, sqlSide, engine.FastScans(), "the SQL side read below SQL")
					require.Equal(t, want, read(opts, true, how), "round %d: %+v (%d)", round, opts, how)
				}
				for range 40 {
					seek, steps := randomWalk(rng, 25)
					require.Equal(t, walk(false, seek, steps), walk(true, seek, steps), "round %d: walk from %s", round, seek)
				}
				if l.fast {
					require.Greater(t, engine.FastScans(), fastBefore+50, "the fast side read below SQL")
				} else {
					require.Equal(t, fastBefore, engine.FastScans(), "a layout the fast path does not read was read below SQL")
				}
			}
		})
	}
}

// reversed returns a reversed copy of rows.
func reversed(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[len(rows)-1-i] = r
	}
	return out
}

// writeForeignTTLRows writes rows into the store at path with plain SQL,
// as the sqlite3 shell would: in any store a data row with no key index
// row, and with TTL tables (withTTL) a key index row (and its expiry index
// row) for a key that has no data row, and keys given a TTL by the shell,
// one live and one past at the tests' first clock. v2 says the tables'
// shape.
func writeForeignTTLRows(t *testing.T, path string, start time.Time, v2, withTTL bool) {
	t.Helper()
	ctx := context.Background()
	raw, err := engine.Open(engine.Config{Path: path, Journal: "WAL", Sync: "NORMAL", BusyTimeout: time.Second, MaxReaders: 1})
	require.NoError(t, err)
	defer func() { require.NoError(t, raw.Close()) }()
	type stmt struct {
		q    string
		args []any
	}
	stmts := []stmt{
		{`INSERT INTO "default" (key, value) VALUES (?1, ?2)`, []any{[]byte("0003 shell"), []byte("no TTL")}},
	}
	if withTTL {
		setIndex := `INSERT INTO "__snkv_ttl_e__default" (expire_ms, key) VALUES (?2, ?1)`
		if !v2 {
			setIndex = `INSERT INTO "__snkv_ttl_e__default" (key) VALUES (CAST(?2 || ?1 AS BLOB))`
		}
		for _, r := range []struct {
			key  string
			data bool
			ttl  time.Duration
		}{{"0004 shell", true, time.Hour}, {"0005 orphan", false, time.Hour}, {"0006 shell", true, time.Second}} {
			if r.data {
				stmts = append(stmts, stmt{`INSERT INTO "default" (key, value) VALUES (?1, ?2)`, []any{[]byte(r.key), []byte("a TTL from the shell")}})
			}
			exp := binary.BigEndian.AppendUint64(nil, uint64(start.Add(r.ttl).UnixMilli()))
			stmts = append(stmts,
				stmt{`INSERT INTO "__snkv_ttl_k__default" (key, expire_ms) VALUES (?1, ?2)`, []any{[]byte(r.key), exp}},
				stmt{setIndex, []any{[]byte(r.key), exp}})
		}
	}
	require.NoError(t, raw.WithWriter(ctx, func(c *engine.Conn) error {
		for _, s := range stmts {
			if _, err := c.Exec(ctx, s.q, s.args...); err != nil {
				return fmt.Errorf("%s: %w", s.q, err)
			}
		}
		return nil
	}))
}

// TestFastPathTTLScanInWriteTxAcrossTTLWrites iterates a TTL column family
// inside a write transaction that writes TTL rows as it goes (refreshes,
// puts that clear a TTL, deletes ahead, Expire of keys ahead, new keys):
// the iteration reads the rows as they were when it started, the same from
// the B-trees as with SQL, and the store ends the same.
func TestFastPathTTLScanInWriteTxAcrossTTLWrites(t *testing.T) {
	fastPathOn(t)
	ctx := context.Background()
	run := func(fast bool) (seen, after []string) {
		engine.SetFastPath(fast)
		defer engine.SetFastPath(true)
		clk := kvstore.NewManualClock(fastEpoch)
		db, err := kvstore.Open(filepath.Join(t.TempDir(), "w.db"), kvstore.Options{Clock: clk})
		require.NoError(t, err)
		defer db.Close()
		var b kvstore.Batch
		for i := range 60 {
			k := fmt.Appendf(nil, "k%02d", i)
			switch i % 3 {
			case 0:
				b.Put(k, []byte("plain"))
			case 1:
				b.PutTTL(k, []byte("live"), time.Hour)
			default:
				b.PutTTL(k, []byte("short"), time.Duration(1+i)*time.Second)
			}
		}
		require.NoError(t, db.Apply(ctx, &b))
		clk.Advance(30 * time.Second) // the short TTLs of k02 … k28 are past
		before := engine.FastScans()
		require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
			i := 0
			for e, err := range tx.All() {
				if err != nil {
					return err
				}
				seen = append(seen, fmt.Sprintf("%s=%s", e.Key, e.Value))
				ahead := fmt.Appendf(nil, "k%02d", i+7)
				switch i % 4 {
				case 0:
					err = tx.PutTTL(e.Key, []byte("refreshed"), time.Minute)
				case 1:
					err = tx.Put(e.Key, []byte("permanent"))
				case 2:
					err = tx.Delete(ahead)
				default:
					err = tx.Expire(ahead, time.Second)
				}
				if err != nil && !errors.Is(err, kvstore.ErrNotFound) { // a key ahead already gone
					return err
				}
				require.NoError(t, tx.PutTTL(append(bytes.Clone(e.Key), 'x'), []byte("new"), time.Hour))
				i++
			}
			return nil
		}))
		if fast {
			require.Greater(t, engine.FastScans(), before, "the fast side read below SQL")
		}
		clk.Advance(2 * time.Second)
		for e, err := range db.All() {
			require.NoError(t, err)
			d, err := db.TTL(e.Key)
			require.NoError(t, err)
			after = append(after, fmt.Sprintf("%s=%s %v", e.Key, e.Value, d))
		}
		return seen, after
	}
	fastSeen, fastAfter := run(true)
	sqlSeen, sqlAfter := run(false)
	require.Len(t, sqlSeen, 50, "60 keys, 10 of them expired, and none of the keys written during the loop")
	require.Equal(t, sqlSeen, fastSeen)
	require.Equal(t, sqlAfter, fastAfter)
}

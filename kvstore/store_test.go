package kvstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCRUD runs the point operations on the default and on a named column
// family, in a file store and an in-memory one.
func TestCRUD(t *testing.T) {
	inEachKind(t, kvstore.Options{}, func(t *testing.T, db *kvstore.Store) {
		users, err := db.CreateColumnFamily("users")
		require.NoError(t, err)
		for _, cf := range []*kvstore.ColumnFamily{db.Default(), users} {
			t.Run(cf.Name(), func(t *testing.T) { testCRUD(t, cf) })
		}
	})
}

func testCRUD(t *testing.T, cf *kvstore.ColumnFamily) {
	_, err := cf.Get(b("a"))
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	ok, err := cf.Exists(b("a"))
	require.NoError(t, err)
	require.False(t, ok)

	require.NoError(t, cf.Put(b("a"), b("1")))
	require.NoError(t, cf.Put(b("b"), b("2")))
	v, err := cf.Get(b("a"))
	require.NoError(t, err)
	require.Equal(t, b("1"), v)
	ok, err = cf.Exists(b("a"))
	require.NoError(t, err)
	require.True(t, ok)

	require.NoError(t, cf.Put(b("a"), b("one")), "overwrite")
	v, err = cf.Get(b("a"))
	require.NoError(t, err)
	require.Equal(t, b("one"), v)

	wrote, err := cf.PutIfAbsent(b("a"), b("nope"))
	require.NoError(t, err)
	require.False(t, wrote, "PutIfAbsent on an existing key")
	v, err = cf.Get(b("a"))
	require.NoError(t, err)
	require.Equal(t, b("one"), v, "PutIfAbsent must not overwrite")
	wrote, err = cf.PutIfAbsent(b("c"), b("3"))
	require.NoError(t, err)
	require.True(t, wrote, "PutIfAbsent on a missing key")
	v, err = cf.Get(b("c"))
	require.NoError(t, err)
	require.Equal(t, b("3"), v)

	n, err := cf.Count()
	require.NoError(t, err)
	require.EqualValues(t, 3, n)

	got, err := cf.GetMany([][]byte{b("c"), b("missing"), b("a"), b("c")})
	require.NoError(t, err)
	require.Equal(t, [][]byte{b("3"), nil, b("one"), b("3")}, got)
	got, err = cf.GetMany(nil)
	require.NoError(t, err)
	require.Empty(t, got)

	require.NoError(t, cf.Delete(b("b")))
	require.ErrorIs(t, cf.Delete(b("b")), kvstore.ErrNotFound, "delete of a deleted key")
	require.ErrorIs(t, cf.Delete(b("never")), kvstore.ErrNotFound, "delete of a missing key")
	_, err = cf.Get(b("b"))
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	require.Equal(t, []kv{{"a", "one"}, {"c", "3"}}, contents(t, cf))

	var batch kvstore.Batch
	batch.Put(b("x"), b("10"))
	batch.Put(b("y"), b("20"))
	batch.Delete(b("a"))
	batch.Delete(b("not-there")) // not an error in a batch
	batch.Put(b("x"), b("11"))   // later operations win
	require.Equal(t, 5, batch.Len())
	require.NoError(t, cf.Apply(context.Background(), &batch))
	require.Equal(t, []kv{{"c", "3"}, {"x", "11"}, {"y", "20"}}, contents(t, cf))
	batch.Reset()
	require.Equal(t, 0, batch.Len())
	require.NoError(t, cf.Apply(context.Background(), &batch), "empty batch")

	require.NoError(t, cf.Clear())
	n, err = cf.Count()
	require.NoError(t, err)
	require.Zero(t, n)
	require.Empty(t, contents(t, cf))
	require.NoError(t, cf.Put(b("a"), b("again")), "usable after Clear")
	n, err = cf.Count()
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
}

// TestApplyIsAtomic: one bad operation anywhere in a batch fails it whole.
func TestApplyIsAtomic(t *testing.T) {
	db := openTemp(t, kvstore.Options{MaxValueSize: 100})
	require.NoError(t, db.Put(b("keep"), b("old")))
	cases := []struct {
		name string
		bad  func(*kvstore.Batch)
		want error
	}{
		{"empty key", func(bt *kvstore.Batch) { bt.Put(nil, b("v")) }, kvstore.ErrInvalidKey},
		{"empty delete key", func(bt *kvstore.Batch) { bt.Delete([]byte{}) }, kvstore.ErrInvalidKey},
		{"key too large", func(bt *kvstore.Batch) { bt.Put(make([]byte, kvstore.MaxKeySize+1), b("v")) }, kvstore.ErrKeyTooLarge},
		{"value too large", func(bt *kvstore.Batch) { bt.Put(b("k"), make([]byte, 101)) }, kvstore.ErrValueTooLarge},
		{"zero TTL", func(bt *kvstore.Batch) { bt.PutTTL(b("k"), b("v"), 0) }, kvstore.ErrInvalidTTL},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var bt kvstore.Batch
			bt.Put(b("new1"), b("v"))
			bt.Put(b("keep"), b("overwritten"))
			bt.Delete(b("keep"))
			tc.bad(&bt)
			bt.Put(b("new2"), b("v"))
			err := db.Apply(context.Background(), &bt)
			require.ErrorIs(t, err, tc.want)
			require.Equal(t, []kv{{"keep", "old"}}, contents(t, db.Default()), "nothing of a failed batch is written")
		})
	}
}

// TestBinaryKeysAndOrder: keys are arbitrary bytes, ordered bytewise.
func TestBinaryKeysAndOrder(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	keys := [][]byte{
		{0x00}, {0x00, 0x00}, {0x00, 0xff}, {0x01}, {0x7f}, {0x80}, {0xfe, 0xff},
		{0xff}, {0xff, 0x00}, {0xff, 0xff}, {0xff, 0xff, 0xff}, b("A"), b("a"), b("a\x00b"), b("ab"),
		b("é"), // UTF-8 bytes sort after ASCII
	}
	shuffled := slices.Clone(keys)
	slices.Reverse(shuffled)
	for i, k := range shuffled {
		require.NoError(t, db.Put(k, []byte{byte(i), 0x00, 0xff}))
	}
	for i, k := range shuffled {
		v, err := db.Get(k)
		require.NoError(t, err)
		require.Equal(t, []byte{byte(i), 0x00, 0xff}, v, "key %x", k)
	}
	slices.SortFunc(keys, bytes.Compare)
	var got [][]byte
	for e, err := range db.All() {
		require.NoError(t, err)
		got = append(got, e.Key)
	}
	require.Equal(t, keys, got)
	// A key and its extension with a NUL byte are distinct.
	require.NoError(t, db.Delete([]byte{0x00, 0x00}))
	ok, err := db.Exists([]byte{0x00})
	require.NoError(t, err)
	require.True(t, ok)
}

// TestKeySizeLimit: keys up to MaxKeySize bytes work, one more is refused.
func TestKeySizeLimit(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	require.Equal(t, 64<<10, kvstore.MaxKeySize)
	big := bytes.Repeat([]byte{0xab}, kvstore.MaxKeySize)
	require.NoError(t, db.Put(big, b("v")))
	v, err := db.Get(big)
	require.NoError(t, err)
	require.Equal(t, b("v"), v)
	got := collect(t, db.All())
	require.Len(t, got, 1)
	require.Equal(t, string(big), got[0].K)

	over := append(bytes.Clone(big), 0x01)
	require.ErrorIs(t, db.Put(over, b("v")), kvstore.ErrKeyTooLarge)
	_, err = db.Get(over)
	require.ErrorIs(t, err, kvstore.ErrKeyTooLarge)
	n, err := db.Count()
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
}

// TestValueSizeLimit: values up to the default 10 MiB, or the configured
// limit, round-trip; one byte more is refused everywhere a value goes in.
func TestValueSizeLimit(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		db := openTemp(t, kvstore.Options{})
		const max = 10 << 20
		val := bytes.Repeat([]byte("0123456789abcdef"), max/16)
		require.NoError(t, db.Put(b("big"), val))
		got, err := db.Get(b("big"))
		require.NoError(t, err)
		require.True(t, bytes.Equal(val, got), "10 MiB value round-trips")
		require.ErrorIs(t, db.Put(b("big2"), make([]byte, max+1)), kvstore.ErrValueTooLarge)
		ok, err := db.Exists(b("big2"))
		require.NoError(t, err)
		require.False(t, ok)
	})
	t.Run("configured", func(t *testing.T) {
		db := openTemp(t, kvstore.Options{MaxValueSize: 100})
		cf, err := db.CreateColumnFamily("cf")
		require.NoError(t, err)
		require.NoError(t, cf.Put(b("k"), make([]byte, 100)))
		require.ErrorIs(t, cf.Put(b("k"), make([]byte, 101)), kvstore.ErrValueTooLarge)
		_, err = cf.PutIfAbsent(b("k2"), make([]byte, 101))
		require.ErrorIs(t, err, kvstore.ErrValueTooLarge)
		require.ErrorIs(t, db.Update(context.Background(), func(tx *kvstore.Tx) error {
			return tx.CF(cf).Put(b("k3"), make([]byte, 101))
		}), kvstore.ErrValueTooLarge)
		v, err := cf.Get(b("k"))
		require.NoError(t, err)
		require.Len(t, v, 100, "the refused overwrite left the old value")
		n, err := cf.Count()
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
	})
}

// TestEmptyValue: an empty (or nil) value reads back as an empty, non-nil
// slice through every read path.
func TestEmptyValue(t *testing.T) {
	inEachKind(t, kvstore.Options{}, func(t *testing.T, db *kvstore.Store) {
		require.NoError(t, db.Put(b("nil"), nil))
		require.NoError(t, db.Put(b("empty"), []byte{}))
		var bt kvstore.Batch
		bt.Put(b("batch"), nil)
		require.NoError(t, db.Apply(context.Background(), &bt))
		_, err := db.PutIfAbsent(b("pia"), nil)
		require.NoError(t, err)
		for _, k := range []string{"nil", "empty", "batch", "pia"} {
			v, err := db.Get(b(k))
			require.NoError(t, err)
			require.NotNil(t, v, k)
			require.Empty(t, v, k)
		}
		vs, err := db.GetMany([][]byte{b("nil"), b("missing")})
		require.NoError(t, err)
		require.NotNil(t, vs[0])
		require.Empty(t, vs[0])
		require.Nil(t, vs[1])
		for e, err := range db.All() {
			require.NoError(t, err)
			require.NotNil(t, e.Value, string(e.Key))
			require.Empty(t, e.Value)
		}
		cur, err := db.Cursor(kvstore.IterOptions{})
		require.NoError(t, err)
		require.True(t, cur.First())
		require.NotNil(t, cur.Value())
		require.NoError(t, cur.Close())
	})
}

// TestSlicesBelongToCaller: neither the slices passed in nor the ones
// returned are shared with the store.
func TestSlicesBelongToCaller(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	key, val := b("key"), b("value")
	require.NoError(t, db.Put(key, val))
	key[0], val[0] = 'X', 'X'
	v, err := db.Get(b("key"))
	require.NoError(t, err)
	require.Equal(t, b("value"), v, "mutating the argument after Put")

	v[0] = 'Y'
	v2, err := db.Get(b("key"))
	require.NoError(t, err)
	require.Equal(t, b("value"), v2, "mutating a returned value")

	require.NoError(t, db.Put(b("key2"), b("value2")))
	vs, err := db.GetMany([][]byte{b("key"), b("key2")})
	require.NoError(t, err)
	vs[0][0], vs[1][0] = 'Z', 'Z'

	var held []kvstore.Entry
	for e, err := range db.All() {
		require.NoError(t, err)
		held = append(held, e)
		e.Key[0], e.Value[0] = 'W', 'W'
	}
	require.Len(t, held, 2)
	require.Equal(t, b("Wey"), held[0].Key, "entries stay valid after the loop moves on")
	require.Equal(t, []kv{{"key", "value"}, {"key2", "value2"}}, contents(t, db.Default()))
}

// TestColumnFamilies covers creation, isolation, listing, dropping and
// persistence of column families.
func TestColumnFamilies(t *testing.T) {
	path := tempPath(t)
	db := openAt(t, path, kvstore.Options{})

	names, err := db.ListColumnFamilies()
	require.NoError(t, err)
	require.Equal(t, []string{kvstore.DefaultColumnFamily}, names)
	require.Equal(t, "default", db.Default().Name())

	odd := []string{`quo"te`, "with space", "ünïcødé-名前", "it's", "Zeta", "a;DROP TABLE x", strings.Repeat("n", 255)}
	cfs := map[string]*kvstore.ColumnFamily{}
	for _, name := range odd {
		cf, err := db.CreateColumnFamily(name)
		require.NoError(t, err, name)
		require.Equal(t, name, cf.Name())
		cfs[name] = cf
	}
	// Isolation: the same key in each column family holds its own value.
	require.NoError(t, db.Put(b("k"), b("default")))
	for name, cf := range cfs {
		require.NoError(t, cf.Put(b("k"), b(name)))
		require.NoError(t, cf.Put(b("only-"+name), b("x")))
	}
	for name, cf := range cfs {
		v, err := cf.Get(b("k"))
		require.NoError(t, err)
		require.Equal(t, name, string(v))
		n, err := cf.Count()
		require.NoError(t, err)
		require.EqualValues(t, 2, n, name)
	}
	v, err := db.Get(b("k"))
	require.NoError(t, err)
	require.Equal(t, b("default"), v)
	n, err := db.Count()
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	require.NoError(t, cfs["Zeta"].Clear())
	n, err = cfs["it's"].Count()
	require.NoError(t, err)
	require.EqualValues(t, 2, n, "Clear touches one column family only")

	want := append([]string{"default"}, odd...)
	slices.Sort(want)
	names, err = db.ListColumnFamilies()
	require.NoError(t, err)
	require.Equal(t, want, names, "sorted bytewise")

	// Open returns a handle on the same data; the name compares without
	// regard to ASCII case and the stored spelling is kept.
	again, err := db.OpenColumnFamily("with space")
	require.NoError(t, err)
	v, err = again.Get(b("k"))
	require.NoError(t, err)
	require.Equal(t, b("with space"), v)
	folded, err := db.OpenColumnFamily("zETA")
	require.NoError(t, err)
	require.Equal(t, "Zeta", folded.Name())
	oc, err := db.ColumnFamilyOrCreate("with space")
	require.NoError(t, err)
	require.Equal(t, "with space", oc.Name())
	oc, err = db.ColumnFamilyOrCreate("fresh")
	require.NoError(t, err)
	require.NoError(t, oc.Put(b("f"), b("1")))
	want = append(want, "fresh")
	slices.Sort(want)

	// Drop: data gone, old handles fail, recreate starts empty.
	require.NoError(t, db.DropColumnFamily("with space"))
	for _, h := range []*kvstore.ColumnFamily{cfs["with space"], again} {
		_, err = h.Get(b("k"))
		require.ErrorIs(t, err, kvstore.ErrNotFound)
		require.ErrorIs(t, h.Put(b("k"), b("v")), kvstore.ErrNotFound)
		_, err = h.Exists(b("k"))
		require.ErrorIs(t, err, kvstore.ErrNotFound, "Exists on a dropped column family is an error, not false")
		_, err = h.Count()
		require.ErrorIs(t, err, kvstore.ErrNotFound)
		_, err = h.GetMany([][]byte{b("k")})
		require.ErrorIs(t, err, kvstore.ErrNotFound)
	}
	_, err = db.OpenColumnFamily("with space")
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	require.ErrorIs(t, db.DropColumnFamily("with space"), kvstore.ErrNotFound)
	re, err := db.CreateColumnFamily("with space")
	require.NoError(t, err)
	n, err = re.Count()
	require.NoError(t, err)
	require.Zero(t, n, "a recreated column family starts empty")
	_, err = cfs["with space"].Get(b("k"))
	require.ErrorIs(t, err, kvstore.ErrNotFound, "a handle from before the drop stays dead")

	// Drop of a column family that used TTL removes its companion tables.
	require.NoError(t, cfs["it's"].PutTTL(b("t"), b("v"), time.Hour))
	require.NoError(t, db.DropColumnFamily("IT'S"))
	want = slices.DeleteFunc(want, func(s string) bool { return s == "it's" })

	before := snapshotAll(t, db)
	require.NoError(t, db.Close())
	var leftovers int
	require.NoError(t, rawDB(t, path).QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name LIKE '%it''s'`).Scan(&leftovers))
	require.Zero(t, leftovers, "no table, view or trigger of a dropped column family remains")

	db = openAt(t, path, kvstore.Options{})
	names, err = db.ListColumnFamilies()
	require.NoError(t, err)
	require.Equal(t, want, names, "column families persist")
	require.Equal(t, before, snapshotAll(t, db), "contents persist")
}

// TestListIgnoresOtherTables: tables that other tools, or snkv's own TTL
// machinery, keep in the file are never listed as column families, and do
// not stop the store from opening.
func TestListIgnoresOtherTables(t *testing.T) {
	path := tempPath(t)
	db := openAt(t, path, kvstore.Options{})
	users, err := db.CreateColumnFamily("users")
	require.NoError(t, err)
	require.NoError(t, users.PutTTL(b("session"), b("s"), time.Hour)) // adds hidden tables
	require.NoError(t, users.Put(b("alice"), b("a")))

	// A replication tool adds its lock table while the store is open.
	rawExec(t, path,
		`CREATE TABLE _litestream_lock (id INTEGER)`,
		`CREATE TABLE "my own" (x TEXT)`,
		`INSERT INTO "my own" VALUES ('mine')`,
	)
	names, err := db.ListColumnFamilies()
	require.NoError(t, err)
	require.Equal(t, []string{"default", "users"}, names)
	_, err = db.OpenColumnFamily("_litestream_lock")
	require.ErrorIs(t, err, kvstore.ErrNotFound, "a foreign table is not a column family")
	_, err = db.CreateColumnFamily("_LITESTREAM_LOCK")
	require.ErrorIs(t, err, kvstore.ErrExists, "a column family cannot take a foreign table's name")
	require.NoError(t, db.IntegrityCheck(context.Background()))
	require.NoError(t, db.Close())

	db = openAt(t, path, kvstore.Options{})
	names, err = db.ListColumnFamilies()
	require.NoError(t, err)
	require.Equal(t, []string{"default", "users"}, names)
	users, err = db.OpenColumnFamily("users")
	require.NoError(t, err)
	require.Equal(t, []kv{{"alice", "a"}, {"session", "s"}}, contents(t, users))
	require.NoError(t, db.Close())

	var mine string
	require.NoError(t, rawDB(t, path).QueryRow(`SELECT x FROM "my own"`).Scan(&mine))
	require.Equal(t, "mine", mine, "a foreign table is left alone")
}

// TestInMemory: an in-memory store supports everything a file store does
// and vanishes on Close.
func TestInMemory(t *testing.T) {
	ctx := context.Background()
	for _, path := range []string{"", ":memory:"} {
		t.Run(fmt.Sprintf("%q", path), func(t *testing.T) {
			db, err := kvstore.Open(path, kvstore.Options{})
			require.NoError(t, err)
			require.Equal(t, "", db.Path())
			require.NoError(t, db.Put(b("a"), b("1")))
			cf, err := db.CreateColumnFamily("cf")
			require.NoError(t, err)
			require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
				if err := tx.Put(b("b"), b("2")); err != nil {
					return err
				}
				return tx.CF(cf).Put(b("c"), b("3"))
			}))
			require.Error(t, db.Update(ctx, func(tx *kvstore.Tx) error {
				require.NoError(t, tx.Put(b("rolled"), b("back")))
				return errors.New("abort")
			}))
			require.NoError(t, db.View(ctx, func(tx *kvstore.Tx) error {
				v, err := tx.CF(cf).Get(b("c"))
				require.NoError(t, err)
				require.Equal(t, b("3"), v)
				return nil
			}))
			require.Equal(t, []kv{{"a", "1"}, {"b", "2"}}, contents(t, db.Default()))
			require.Equal(t, []kv{{"b", "2"}, {"a", "1"}}, collect(t, db.Backward()))
			st, err := db.Stats(ctx)
			require.NoError(t, err)
			require.Zero(t, st.FileSize)
			require.NoError(t, db.Close())

			// A new in-memory store shares nothing with the closed one.
			db2 := openAt(t, path, kvstore.Options{})
			n, err := db2.Count()
			require.NoError(t, err)
			require.Zero(t, n)
			names, err := db2.ListColumnFamilies()
			require.NoError(t, err)
			require.Equal(t, []string{"default"}, names)
		})
	}
	t.Run("two at once are separate", func(t *testing.T) {
		a := openAt(t, "", kvstore.Options{})
		c := openAt(t, "", kvstore.Options{})
		require.NoError(t, a.Put(b("k"), b("a")))
		_, err := c.Get(b("k"))
		require.ErrorIs(t, err, kvstore.ErrNotFound)
	})
}

// TestOptionsApplied: the storage options reach the file.
func TestOptionsApplied(t *testing.T) {
	ctx := context.Background()
	t.Run("page size of a new file", func(t *testing.T) {
		path := tempPath(t)
		db := openAt(t, path, kvstore.Options{PageSize: 8192, CacheSize: 1 << 20, Sync: kvstore.SyncFull})
		require.NoError(t, db.Put(b("k"), b("v")))
		st, err := db.Stats(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 8192, st.PageSize)
		require.NoError(t, db.Close())
		db = openAt(t, path, kvstore.Options{PageSize: 1024, Sync: kvstore.SyncOff})
		st, err = db.Stats(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 8192, st.PageSize, "an existing file keeps its page size")
	})
	t.Run("journal", func(t *testing.T) {
		for _, tc := range []struct {
			mode kvstore.JournalMode
			want string
		}{{kvstore.JournalWAL, "wal"}, {kvstore.JournalDelete, "delete"}} {
			path := tempPath(t)
			db := openAt(t, path, kvstore.Options{Journal: tc.mode})
			require.NoError(t, db.Put(b("k"), b("v")))
			_, walErr := os.Stat(path + "-wal")
			require.Equal(t, tc.mode == kvstore.JournalWAL, walErr == nil, "a -wal file exists only in WAL mode")
			require.NoError(t, db.Close())
			var mode string
			require.NoError(t, rawDB(t, path).QueryRow(`PRAGMA journal_mode`).Scan(&mode))
			require.Equal(t, tc.want, mode)
		}
	})
	t.Run("format header", func(t *testing.T) {
		path := tempPath(t)
		db := openAt(t, path, kvstore.Options{})
		require.NoError(t, db.Close())
		raw := rawDB(t, path)
		var app, ver int64
		require.NoError(t, raw.QueryRow(`PRAGMA application_id`).Scan(&app))
		require.NoError(t, raw.QueryRow(`PRAGMA user_version`).Scan(&ver))
		require.EqualValues(t, 0x736e6b76, app)
		require.EqualValues(t, 2, ver)
		var sqlText string
		require.NoError(t, raw.QueryRow(`SELECT sql FROM sqlite_schema WHERE name = 'default'`).Scan(&sqlText))
		assert.Contains(t, sqlText, "WITHOUT ROWID")
	})
	t.Run("empty existing file becomes a store", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "empty.db")
		require.NoError(t, os.WriteFile(path, nil, 0o644))
		db := openAt(t, path, kvstore.Options{})
		require.NoError(t, db.Put(b("k"), b("v")))
	})
}

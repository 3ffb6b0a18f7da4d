package kvstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// Iteration over keys with a TTL: every kind of iteration skips expired
// keys, and deletes them when it may (after a cursor closes, inside Update,
// never inside View).

// ttlIterCase is one way of iterating a column family.
type ttlIterCase struct {
	name    string
	run     func(t *testing.T, cf *kvstore.ColumnFamily) []string
	want    []string
	visited []string // expired keys the iteration passes over
}

func ttlIterCases() []ttlIterCase {
	cursor := func(opts kvstore.IterOptions, steps func(t *testing.T, c *kvstore.Cursor) []string) func(t *testing.T, cf *kvstore.ColumnFamily) []string {
		return func(t *testing.T, cf *kvstore.ColumnFamily) []string {
			c, err := cf.Cursor(opts)
			require.NoError(t, err)
			got := steps(t, c)
			require.NoError(t, c.Err())
			require.NoError(t, c.Close())
			return got
		}
	}
	pos := func(t *testing.T, c *kvstore.Cursor, ok bool) string {
		t.Helper()
		if !ok {
			require.False(t, c.Valid())
			return "<end>"
		}
		require.True(t, c.Valid())
		return string(c.Key())
	}
	return []ttlIterCase{
		{
			name:    "All",
			run:     func(t *testing.T, cf *kvstore.ColumnFamily) []string { return ttlCollect(t, cf.All()) },
			want:    []string{"a2", "k00", "k02", "k04", "k06", "k08", "z2"},
			visited: []string{"a1", "k01", "k03", "k05", "k07", "k09", "z1"},
		},
		{
			name:    "Backward",
			run:     func(t *testing.T, cf *kvstore.ColumnFamily) []string { return ttlCollect(t, cf.Backward()) },
			want:    []string{"z2", "k08", "k06", "k04", "k02", "k00", "a2"},
			visited: []string{"a1", "k01", "k03", "k05", "k07", "k09", "z1"},
		},
		{
			name:    "Prefix",
			run:     func(t *testing.T, cf *kvstore.ColumnFamily) []string { return ttlCollect(t, cf.Prefix([]byte("k"))) },
			want:    []string{"k00", "k02", "k04", "k06", "k08"},
			visited: []string{"k01", "k03", "k05", "k07", "k09"},
		},
		{
			name: "PrefixReverse",
			run: func(t *testing.T, cf *kvstore.ColumnFamily) []string {
				return ttlCollect(t, cf.Scan(kvstore.IterOptions{Prefix: []byte("k"), Reverse: true}))
			},
			want:    []string{"k08", "k06", "k04", "k02", "k00"},
			visited: []string{"k01", "k03", "k05", "k07", "k09"},
		},
		{
			name: "Range",
			run: func(t *testing.T, cf *kvstore.ColumnFamily) []string {
				return ttlCollect(t, cf.Range([]byte("k03"), []byte("k08")))
			},
			want:    []string{"k04", "k06"},
			visited: []string{"k03", "k05", "k07"},
		},
		{
			name: "RangeReverse",
			run: func(t *testing.T, cf *kvstore.ColumnFamily) []string {
				return ttlCollect(t, cf.Scan(kvstore.IterOptions{Start: []byte("k03"), End: []byte("k08"), Reverse: true}))
			},
			want:    []string{"k06", "k04"},
			visited: []string{"k03", "k05", "k07"},
		},
		{
			name: "CursorSeekNextPrev",
			run: cursor(kvstore.IterOptions{Prefix: []byte("k")}, func(t *testing.T, c *kvstore.Cursor) []string {
				return []string{
					pos(t, c, c.Seek([]byte("k05"))), // expired: lands on k06
					pos(t, c, c.Next()),
					pos(t, c, c.Next()),
					pos(t, c, c.Prev()), // from the end: the last key
					pos(t, c, c.Prev()),
					pos(t, c, c.Prev()),
					pos(t, c, c.Seek([]byte("k07"))),
				}
			}),
			want:    []string{"k06", "k08", "<end>", "k08", "k06", "k04", "k08"},
			visited: []string{"k05", "k07", "k09"},
		},
		{
			name: "CursorReverse",
			run: cursor(kvstore.IterOptions{Prefix: []byte("k"), Reverse: true}, func(t *testing.T, c *kvstore.Cursor) []string {
				return []string{
					pos(t, c, c.Seek([]byte("k05"))), // largest <= k05 that is live
					pos(t, c, c.Next()),
					pos(t, c, c.Prev()),
					pos(t, c, c.First()),
					pos(t, c, c.Last()),
				}
			}),
			want:    []string{"k04", "k02", "k04", "k08", "k00"},
			visited: []string{"k05", "k03", "k09"},
		},
	}
}

// ttlIterSetup writes k00..k09 (odd keys expire soon, even keys are
// permanent or expire late) and a1/a2/z1/z2 around them, then moves the
// clock so that the odd keys, a1 and z1 are expired.
func ttlIterSetup(t *testing.T, f *ttlFixture, cf *kvstore.ColumnFamily) {
	t.Helper()
	for i := range 10 {
		key := fmt.Appendf(nil, "k%02d", i)
		switch {
		case i%2 == 1:
			require.NoError(t, cf.PutTTL(key, []byte("old"), time.Second))
		case i%4 == 0:
			require.NoError(t, cf.Put(key, []byte("perm")))
		default:
			require.NoError(t, cf.PutTTL(key, []byte("late"), time.Hour))
		}
	}
	require.NoError(t, cf.PutTTL([]byte("a1"), []byte("old"), time.Second))
	require.NoError(t, cf.Put([]byte("a2"), []byte("perm")))
	require.NoError(t, cf.PutTTL([]byte("z1"), []byte("old"), time.Second))
	require.NoError(t, cf.PutTTL([]byte("z2"), []byte("late"), time.Hour))
	f.clk.Advance(time.Second)
}

// Every kind of iteration skips expired keys; outside a transaction the
// keys it skipped are deleted once it ends, and no others.
func TestTTLIteratorsSkipExpired(t *testing.T) {
	for _, c := range ttlIterCases() {
		t.Run(c.name, func(t *testing.T) {
			f := newTTLFixture(t)
			cf := f.cf(t, "it")
			ttlIterSetup(t, f, cf)
			before := f.stats(t).ExpiredOnRead
			require.Equal(t, c.want, c.run(t, cf))
			require.GreaterOrEqual(t, f.stats(t).ExpiredOnRead-before, uint64(len(c.visited)))

			for _, k := range c.visited {
				require.Equal(t, [3]int64{0, 0, 0}, ttlKeyRows(t, f.path, "it", k), "skipped key %s is deleted", k)
			}
			if !slices.Contains(c.visited, "z1") {
				require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, "it", "z1"), "a key outside the iteration stays for purge")
			}
			for _, k := range []string{"k00", "k02", "k04", "k06", "k08", "a2", "z2"} {
				require.Equal(t, int64(1), ttlKeyRows(t, f.path, "it", k)[0], "live key %s", k)
			}
			count, err := cf.Count()
			require.NoError(t, err)
			require.EqualValues(t, 7, count)
			n, err := cf.PurgeExpired(context.Background())
			require.NoError(t, err)
			require.Equal(t, 7-len(c.visited), n, "purge removes exactly the expired keys the iteration left")
			f.check(t)
		})
	}
}

// While a cursor is open its skipped keys are only hidden: the deletion
// waits for Close, so the cursor's snapshot never blocks on the writer.
func TestTTLCursorDefersDeletionUntilClose(t *testing.T) {
	f := newTTLFixture(t)
	cf := f.cf(t, "it")
	ttlIterSetup(t, f, cf)
	c, err := cf.Cursor(kvstore.IterOptions{})
	require.NoError(t, err)
	var got []string
	for ok := c.First(); ok; ok = c.Next() {
		got = append(got, string(c.Key()))
	}
	require.NoError(t, c.Err())
	require.Equal(t, []string{"a2", "k00", "k02", "k04", "k06", "k08", "z2"}, got)
	require.Equal(t, [3]int64{14, 10, 10}, ttlCounts(t, f.path, "it"), "still there while the cursor is open")
	// Writers are not blocked by the open cursor.
	require.NoError(t, cf.PutTTL([]byte("new"), []byte("v"), time.Minute))
	require.NoError(t, c.Close())
	require.Equal(t, [3]int64{8, 4, 4}, ttlCounts(t, f.path, "it"))
	require.NoError(t, c.Close())
}

// A loop that breaks early still deletes the expired keys it passed.
func TestTTLIteratorBreakDeletesSkipped(t *testing.T) {
	f := newTTLFixture(t)
	cf := f.cf(t, "it")
	ttlIterSetup(t, f, cf)
	var got []string
	for e, err := range cf.Prefix([]byte("k")) {
		require.NoError(t, err)
		got = append(got, string(e.Key))
		if len(got) == 3 {
			break
		}
	}
	require.Equal(t, []string{"k00", "k02", "k04"}, got)
	for _, k := range []string{"k01", "k03"} {
		require.Equal(t, [3]int64{0, 0, 0}, ttlKeyRows(t, f.path, "it", k))
	}
	require.Equal(t, [3]int64{1, 1, 1}, ttlKeyRows(t, f.path, "it", "k09"))
}

// Inside Update every iteration skips expired keys; the deletes join the
// transaction: committed with it, or rolled back with it.
func TestTTLIteratorsInsideUpdate(t *testing.T) {
	ctx := context.Background()
	for _, commit := range []bool{false, true} {
		t.Run(fmt.Sprintf("commit=%v", commit), func(t *testing.T) {
			f := newTTLFixture(t)
			cf := f.cf(t, "it")
			ttlIterSetup(t, f, cf)
			errAbort := errors.New("abort")
			err := f.db.Update(ctx, func(tx *kvstore.Tx) error {
				for _, c := range ttlIterCases() {
					require.Equal(t, c.want, c.run(t, tx.CF(cf)), c.name)
				}
				require.Equal(t, [3]int64{14, 10, 10}, ttlCounts(t, f.path, "it"), "nothing is committed during the transaction")
				if commit {
					return nil
				}
				return errAbort
			})
			if commit {
				require.NoError(t, err)
				require.Equal(t, [3]int64{7, 3, 3}, ttlCounts(t, f.path, "it"))
			} else {
				require.ErrorIs(t, err, errAbort)
				require.Equal(t, [3]int64{14, 10, 10}, ttlCounts(t, f.path, "it"), "the lazy deletes rolled back")
			}
			f.check(t)
		})
	}
}

// Inside View expired keys are hidden from every read and iteration;
// nothing is written during the View; the deletion happens after it.
func TestTTLExpiryInsideView(t *testing.T) {
	ctx := context.Background()
	f := newTTLFixture(t)
	cf := f.cf(t, "it")
	ttlIterSetup(t, f, cf)
	commits := f.stats(t).Commits
	require.NoError(t, f.db.View(ctx, func(tx *kvstore.Tx) error {
		v := tx.CF(cf)
		for _, c := range ttlIterCases() {
			require.Equal(t, c.want, c.run(t, v), c.name)
		}
		ttlGone(t, v, "a1")
		_, err := v.TTL([]byte("z1"))
		require.ErrorIs(t, err, kvstore.ErrNotFound)
		ok, err := v.Exists([]byte("k01"))
		require.NoError(t, err)
		require.False(t, ok)
		vs, err := v.GetMany([][]byte{[]byte("k00"), []byte("k01")})
		require.NoError(t, err)
		require.Equal(t, []byte("perm"), vs[0])
		require.Nil(t, vs[1])
		n, err := v.Count()
		require.NoError(t, err)
		require.EqualValues(t, 7, n)

		require.Equal(t, [3]int64{14, 10, 10}, ttlCounts(t, f.path, "it"), "nothing is deleted during the View")
		require.Equal(t, commits, f.stats(t).Commits, "nothing is committed during the View")
		return nil
	}))
	// Afterwards the expired keys the View met are gone.
	require.Equal(t, [3]int64{7, 3, 3}, ttlCounts(t, f.path, "it"))
}

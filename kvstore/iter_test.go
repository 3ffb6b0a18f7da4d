package kvstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/snkv-go/snkv/iterator"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// edgeBytes are the bytes random keys are drawn from: the extremes and
// their neighbours, so that prefixes and bounds meet 0x00 and 0xFF often.
var edgeBytes = []byte{0x00, 0x01, 'a', 'b', 0x7f, 0x80, 0xfe, 0xff}

func randKey(r *rand.Rand, maxLen int) []byte {
	k := make([]byte, 1+r.IntN(maxLen))
	for i := range k {
		k[i] = edgeBytes[r.IntN(len(edgeBytes))]
	}
	return k
}

// fillRandom writes n random keys into cf (some overwritten, some deleted)
// and returns the model of what cf holds.
func fillRandom(t *testing.T, r *rand.Rand, cf *kvstore.ColumnFamily, n int) model {
	t.Helper()
	m := model{}
	var bt kvstore.Batch
	for i := range n {
		k := randKey(r, 4)
		v := fmt.Sprintf("v%d", i)
		bt.Put(k, []byte(v))
		m[string(k)] = v
		if i%7 == 0 {
			d := randKey(r, 4)
			bt.Delete(d)
			delete(m, string(d))
		}
	}
	// The all-0xFF keys, where prefix ends are hardest.
	for _, k := range []string{"\xff", "\xff\xff", "\xff\xff\xff", "\xff\xff\x00"} {
		bt.Put([]byte(k), []byte("ff"))
		m[k] = "ff"
	}
	require.NoError(t, cf.Apply(context.Background(), &bt))
	return m
}

// randBound returns nil, an empty slice, a key of the model or a random key.
func randBound(r *rand.Rand, keys []string) []byte {
	switch r.IntN(5) {
	case 0:
		return nil
	case 1:
		if r.IntN(4) == 0 {
			return []byte{}
		}
		return nil
	case 2:
		if len(keys) > 0 {
			return []byte(keys[r.IntN(len(keys))])
		}
	}
	return randKey(r, 3)
}

func randOptions(r *rand.Rand, m model) kvstore.IterOptions {
	keys := make([]string, 0, len(m))
	for _, p := range m.sorted() {
		keys = append(keys, p.K)
	}
	var o kvstore.IterOptions
	switch r.IntN(4) {
	case 0: // no prefix
	case 1:
		o.Prefix = bytes.Repeat([]byte{0xff}, 1+r.IntN(3))
	default:
		o.Prefix = randKey(r, 2)
		if r.IntN(3) == 0 {
			o.Prefix = append(o.Prefix, 0xff)
		}
	}
	o.Start = randBound(r, keys)
	o.End = randBound(r, keys)
	o.Reverse = r.IntN(2) == 0
	return o
}

// TestScanMatchesModel compares every iteration helper with a sorted-map
// model over random keys and random options.
func TestScanMatchesModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	db := openTemp(t, kvstore.Options{})
	cf, err := db.CreateColumnFamily("rand")
	require.NoError(t, err)
	m := fillRandom(t, r, cf, 400)
	require.NoError(t, db.Put(b("other cf"), b("x"))) // must never show up

	require.Equal(t, m.sorted(), collect(t, cf.All()), "All")
	back := m.sorted()
	slices.Reverse(back)
	require.Equal(t, back, collect(t, cf.Backward()), "Backward")
	n, err := cf.Count()
	require.NoError(t, err)
	require.EqualValues(t, len(m), n)

	for i := range 300 {
		o := randOptions(r, m)
		want := m.selectKeys(o)
		require.Equal(t, want, collect(t, cf.Scan(o)), "case %d: %+q", i, o)
		o.Borrow = true // collect copies each entry before the next step
		require.Equal(t, want, collect(t, cf.Scan(o)), "case %d, borrowed: %+q", i, o)
		o.Borrow = false
		if o.Start == nil && o.End == nil && !o.Reverse {
			require.Equal(t, want, collect(t, cf.Prefix(o.Prefix)), "Prefix %q", o.Prefix)
		}
		if o.Prefix == nil && !o.Reverse {
			require.Equal(t, want, collect(t, cf.Range(o.Start, o.End)), "Range %q %q", o.Start, o.End)
		}
	}
}

// TestScanEdges pins the option combinations that are easy to get wrong.
func TestScanEdges(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	keys := []string{"\x00", "a", "a\x00", "a\xff", "a\xff\xff", "a\xff\xff\x00", "b", "\xfe\xff", "\xff", "\xff\xff", "\xff\xff\xff"}
	m := model{}
	for _, k := range keys {
		require.NoError(t, db.Put(b(k), b("v"+k)))
		m[k] = "v" + k
	}
	cases := []kvstore.IterOptions{
		{Prefix: b("a\xff")},
		{Prefix: b("a\xff"), Reverse: true},
		{Prefix: b("a\xff\xff")},
		{Prefix: b("\xff")},
		{Prefix: b("\xff\xff"), Reverse: true},
		{Prefix: b("\xff\xff\xff\xff")},
		{Prefix: b("\xfe")},
		{Prefix: []byte{}},
		{Start: b("a"), End: b("a")},       // empty: end == start
		{Start: b("b"), End: b("a")},       // empty: end < start
		{End: []byte{}},                    // empty: nothing is below the empty key
		{Start: []byte{}, End: b("a\x00")}, // an empty start is no bound
		{Prefix: b("a"), Start: b("b")},    // start past the prefix
		{Prefix: b("a"), End: b("a")},      // end at the prefix itself
		{Prefix: b("a"), Start: b("a\xff"), End: b("a\xff\xff\x00"), Reverse: true},
		{Prefix: b("b"), Start: b("\x00"), End: b("\xff\xff\xff\xff")},
		{Start: b("\xff"), Reverse: true},
		{End: b("\x00"), Reverse: true},
		{End: b("\x00\x00")},
	}
	for _, o := range cases {
		require.Equal(t, m.selectKeys(o), collect(t, db.Scan(o)), "%+q", o)
	}
	require.Equal(t, []kv{{"\xff\xff", "v\xff\xff"}, {"\xff\xff\xff", "v\xff\xff\xff"}}, collect(t, db.Prefix(b("\xff\xff"))))
	require.Empty(t, collect(t, db.Range(b("x"), b("x"))))
}

// cursorModel tracks where a cursor must be: pos in [0, len(keys)) is on a
// key; -1 is before the first, len(keys) after the last (in iteration
// order); fresh is not yet positioned.
type cursorModel struct {
	keys  []kv // in iteration order
	pos   int
	fresh bool
	rev   bool
}

func (c *cursorModel) valid() bool { return c.pos >= 0 && c.pos < len(c.keys) }

func (c *cursorModel) first() { c.fresh, c.pos = false, 0 }
func (c *cursorModel) last()  { c.fresh, c.pos = false, len(c.keys)-1 }
func (c *cursorModel) next() {
	switch {
	case c.fresh:
		c.first()
	case c.pos < len(c.keys):
		c.pos++
	}
}
func (c *cursorModel) prev() {
	switch {
	case c.fresh, c.pos == len(c.keys):
		c.last()
	case c.pos >= 0:
		c.pos--
	}
}

// seek: the first key at or after k in iteration order.
func (c *cursorModel) seek(k []byte) {
	c.fresh = false
	c.pos = len(c.keys)
	for i, p := range c.keys {
		cmp := bytes.Compare([]byte(p.K), k)
		if (!c.rev && cmp >= 0) || (c.rev && cmp <= 0) {
			c.pos = i
			return
		}
	}
}

// TestCursorRandomWalk drives cursors with random moves and compares each
// step with the model.
func TestCursorRandomWalk(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	db := openTemp(t, kvstore.Options{})
	m := fillRandom(t, r, db.Default(), 200)
	steps := 200
	if testing.Short() {
		steps = 80
	}
	for walk := range 40 {
		o := randOptions(r, m)
		if walk%4 == 0 {
			o.Prefix, o.Start, o.End = nil, nil, nil
		}
		// Every other walk borrows: each step is checked before the next.
		o.Borrow = walk%2 == 1
		cur, err := db.Cursor(o)
		require.NoError(t, err)
		mod := &cursorModel{keys: m.selectKeys(o), fresh: true, pos: -1, rev: o.Reverse}
		var trail []string
		for range steps {
			var ok bool
			switch op := r.IntN(10); {
			case op < 4:
				trail = append(trail, "next")
				ok = cur.Next()
				mod.next()
			case op < 8:
				trail = append(trail, "prev")
				ok = cur.Prev()
				mod.prev()
			case op == 8:
				k := randKey(r, 3)
				trail = append(trail, fmt.Sprintf("seek %q", k))
				ok = cur.Seek(k)
				mod.seek(k)
			default:
				if r.IntN(2) == 0 {
					trail = append(trail, "first")
					ok = cur.First()
					mod.first()
				} else {
					trail = append(trail, "last")
					ok = cur.Last()
					mod.last()
				}
			}
			require.NoError(t, cur.Err())
			require.Equal(t, mod.valid(), ok, "walk %d %+q: %q", walk, o, trail)
			require.Equal(t, ok, cur.Valid())
			if ok {
				want := mod.keys[mod.pos]
				require.Equal(t, want, kv{string(cur.Key()), string(cur.Value())}, "walk %d %+q: %q", walk, o, trail)
			} else {
				require.Nil(t, cur.Key())
				require.Nil(t, cur.Value())
			}
		}
		require.NoError(t, cur.Close())
	}
}

// TestCursorBasics walks a small, known column family by hand.
func TestCursorBasics(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	for _, k := range []string{"a", "c", "e"} {
		require.NoError(t, db.Put(b(k), b(k+k)))
	}
	at := func(cur *kvstore.Cursor, ok bool, want string) {
		t.Helper()
		require.NoError(t, cur.Err())
		if want == "" {
			require.False(t, ok)
			require.False(t, cur.Valid())
			return
		}
		require.True(t, ok)
		require.Equal(t, want, string(cur.Key()))
		require.Equal(t, want+want, string(cur.Value()))
	}

	fwd, err := db.Cursor(kvstore.IterOptions{})
	require.NoError(t, err)
	require.False(t, fwd.Valid(), "a new cursor is not positioned")
	at(fwd, fwd.Seek(b("b")), "c")
	at(fwd, fwd.Seek(b("c")), "c")
	at(fwd, fwd.Prev(), "a")
	at(fwd, fwd.Next(), "c") // direction switch
	at(fwd, fwd.Next(), "e")
	at(fwd, fwd.Next(), "")  // off the end
	at(fwd, fwd.Next(), "")  // stays off
	at(fwd, fwd.Prev(), "e") // and steps back
	at(fwd, fwd.First(), "a")
	at(fwd, fwd.Prev(), "") // off the start
	at(fwd, fwd.Prev(), "")
	at(fwd, fwd.Next(), "a")
	at(fwd, fwd.Seek(b("f")), "")
	at(fwd, fwd.Prev(), "e")
	at(fwd, fwd.Last(), "e")
	require.NoError(t, fwd.Close())
	require.NoError(t, fwd.Close(), "Close twice")
	require.False(t, fwd.Valid())
	require.Nil(t, fwd.Key())
	require.False(t, fwd.Next(), "Next after Close")
	require.ErrorIs(t, fwd.Err(), iterator.ErrClosedCursor, "use after Close is reported")
	require.False(t, fwd.First())
	require.False(t, fwd.Seek(b("a")))
	require.ErrorIs(t, fwd.Err(), iterator.ErrClosedCursor)

	rev, err := db.Cursor(kvstore.IterOptions{Reverse: true})
	require.NoError(t, err)
	at(rev, rev.Next(), "e") // an unpositioned cursor's Next is First
	at(rev, rev.Seek(b("d")), "c")
	at(rev, rev.Seek(b("c")), "c")
	at(rev, rev.Next(), "a")
	at(rev, rev.Prev(), "c")
	at(rev, rev.Seek(b("0")), "")
	at(rev, rev.Prev(), "a")
	at(rev, rev.Last(), "a")
	at(rev, rev.First(), "e")
	require.NoError(t, rev.Close())

	fresh, err := db.Cursor(kvstore.IterOptions{Prefix: b("c")})
	require.NoError(t, err)
	at(fresh, fresh.Prev(), "c") // an unpositioned cursor's Prev is Last
	at(fresh, fresh.Next(), "")
	require.NoError(t, fresh.Close())

	empty, err := db.Cursor(kvstore.IterOptions{Start: b("x")})
	require.NoError(t, err)
	at(empty, empty.First(), "")
	at(empty, empty.Last(), "")
	at(empty, empty.Seek(b("a")), "")
	at(empty, empty.Next(), "")
	at(empty, empty.Prev(), "")
	require.NoError(t, empty.Close())
}

// TestCursorSnapshot: a cursor reads one snapshot for its whole life, even
// when it changes direction or seeks after later commits.
func TestCursorSnapshot(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	for _, k := range []string{"b", "c", "d"} {
		require.NoError(t, db.Put(b(k), b("old")))
	}
	cur, err := db.Cursor(kvstore.IterOptions{})
	require.NoError(t, err)
	defer cur.Close()
	require.True(t, cur.First())
	require.NoError(t, db.Put(b("a"), b("new")))
	require.NoError(t, db.Put(b("e"), b("new")))
	require.NoError(t, db.Put(b("c"), b("new")))
	require.NoError(t, db.Delete(b("d")))
	var seen []kv
	for ok := cur.First(); ok; ok = cur.Next() {
		seen = append(seen, kv{string(cur.Key()), string(cur.Value())})
	}
	require.Equal(t, []kv{{"b", "old"}, {"c", "old"}, {"d", "old"}}, seen)
	require.True(t, cur.Last())
	require.Equal(t, b("d"), cur.Key())
	require.True(t, cur.Seek(b("a")))
	require.Equal(t, b("b"), cur.Key())
	require.NoError(t, cur.Err())
}

// TestIterationErrorsSurface: an iteration that cannot run reports an
// error; it never ends as if the column family were empty.
func TestIterationErrorsSurface(t *testing.T) {
	ctx := context.Background()
	t.Run("dropped by this store", func(t *testing.T) {
		db := openTemp(t, kvstore.Options{})
		cf, err := db.CreateColumnFamily("gone")
		require.NoError(t, err)
		require.NoError(t, cf.Put(b("k"), b("v")))
		require.NoError(t, db.DropColumnFamily("gone"))
		require.ErrorIs(t, firstErr(cf.All()), kvstore.ErrNotFound)
		_, err = cf.Cursor(kvstore.IterOptions{})
		require.ErrorIs(t, err, kvstore.ErrNotFound)
	})
	t.Run("dropped by another process", func(t *testing.T) {
		path := tempPath(t)
		db := openAt(t, path, kvstore.Options{})
		cf, err := db.CreateColumnFamily("gone")
		require.NoError(t, err)
		require.NoError(t, cf.Put(b("k"), b("v")))
		require.Equal(t, []kv{{"k", "v"}}, collect(t, cf.All())) // statements now cached
		other := openAt(t, path, kvstore.Options{})
		require.NoError(t, other.DropColumnFamily("gone"))

		require.ErrorIs(t, firstErr(cf.All()), kvstore.ErrNotFound)
		require.ErrorIs(t, firstErr(cf.Scan(kvstore.IterOptions{Prefix: b("k"), Reverse: true})), kvstore.ErrNotFound)
		// The handle knows by now that its column family is gone: a new
		// cursor fails at once, or on its first move.
		cur, err := cf.Cursor(kvstore.IterOptions{})
		if err != nil {
			require.ErrorIs(t, err, kvstore.ErrNotFound)
		} else {
			require.False(t, cur.First())
			require.ErrorIs(t, cur.Err(), kvstore.ErrNotFound)
			require.False(t, cur.Next(), "a failed cursor stays failed")
			if err := cur.Close(); err != nil {
				require.ErrorIs(t, err, kvstore.ErrNotFound, "Close may repeat the failure, nothing else")
			}
		}
		_, err = cf.Get(b("k"))
		require.ErrorIs(t, err, kvstore.ErrNotFound)
		require.NoError(t, db.Put(b("d"), b("v")), "the store is still usable")
	})
	t.Run("store closed", func(t *testing.T) {
		db := openTemp(t, kvstore.Options{BusyTimeout: time.Minute})
		require.NoError(t, db.Put(b("a"), b("1")))
		require.NoError(t, db.Put(b("b"), b("2")))
		open, err := db.Cursor(kvstore.IterOptions{})
		require.NoError(t, err)
		require.True(t, open.First())
		var entries, errs int
		for _, err := range db.All() {
			if err != nil {
				require.ErrorIs(t, err, kvstore.ErrClosed)
				errs++
				continue
			}
			entries++
			if entries == 1 {
				start := time.Now()
				require.NoError(t, db.Close())
				require.Less(t, time.Since(start), 30*time.Second, "Close does not wait out the busy timeout for open readers")
			}
		}
		require.Equal(t, 2, entries, "an iteration that began goes on with its snapshot")
		require.Zero(t, errs)
		require.ErrorIs(t, firstErr(db.All()), kvstore.ErrClosed)
		require.ErrorIs(t, firstErr(db.Backward()), kvstore.ErrClosed)
		// A cursor opened before Close keeps its connection until closed.
		require.True(t, open.Next())
		require.Equal(t, b("b"), open.Key())
		require.NoError(t, open.Close())
	})
	t.Run("transaction ended", func(t *testing.T) {
		db := openTemp(t, kvstore.Options{})
		require.NoError(t, db.Put(b("a"), b("1")))
		tx, err := db.Begin(ctx, false)
		require.NoError(t, err)
		cur, err := tx.Cursor(kvstore.IterOptions{})
		require.NoError(t, err)
		require.NoError(t, tx.Commit())
		require.False(t, cur.First())
		require.Error(t, cur.Err())
		require.True(t, errors.Is(cur.Err(), kvstore.ErrTxDone) || errors.Is(cur.Err(), iterator.ErrClosedCursor), "%v", cur.Err())
		require.ErrorIs(t, firstErr(tx.All()), kvstore.ErrTxDone)
		require.NoError(t, cur.Close())

		// A cursor whose transaction ends while it is positioned.
		tx, err = db.Begin(ctx, false)
		require.NoError(t, err)
		cur, err = tx.Cursor(kvstore.IterOptions{})
		require.NoError(t, err)
		require.True(t, cur.First())
		require.NoError(t, tx.Rollback())
		require.False(t, cur.Next())
		require.Error(t, cur.Err(), "a cursor cut off by the end of its transaction reports it")
		require.NoError(t, cur.Close())
	})
}

// TestBreakReleasesConnection: leaving a loop early (break, return or
// panic) gives the read connection back.
func TestBreakReleasesConnection(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t, kvstore.Options{MaxReaders: 2, BusyTimeout: 2 * time.Second})
	for i := range 10 {
		require.NoError(t, db.Put([]byte{byte(i)}, b("v")))
	}
	for range 50 {
		for _, err := range db.All() {
			require.NoError(t, err)
			break
		}
		for _, err := range db.Backward() {
			require.NoError(t, err)
			break
		}
		func() {
			defer func() { require.Equal(t, "stop", recover()) }()
			for range db.Prefix([]byte{0x03}) {
				panic("stop")
			}
		}()
	}
	// A complete loop nested inside a broken one.
	for _, err := range db.All() {
		require.NoError(t, err)
		require.Len(t, collect(t, db.All()), 10)
		break
	}
	st, err := db.Stats(ctx)
	require.NoError(t, err)
	require.LessOrEqual(t, st.OpenReaders, 2)
	require.EqualValues(t, 50*3+2, st.Iterators)
	// Both readers must be free again: two read transactions at once.
	tx1, err := db.Begin(ctx, false)
	require.NoError(t, err)
	tx2, err := db.Begin(ctx, false)
	require.NoError(t, err)
	require.NoError(t, tx1.Commit())
	require.NoError(t, tx2.Commit())
	require.Len(t, collect(t, db.All()), 10)
}

// TestNestedIteration: iterations nest, on the store and inside a
// transaction (where they share its connection).
func TestNestedIteration(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t, kvstore.Options{})
	for _, k := range []string{"a", "b", "c"} {
		require.NoError(t, db.Put(b(k), b(k)))
	}
	var pairs []string
	for outer, err := range db.All() {
		require.NoError(t, err)
		for inner, err := range db.Backward() {
			require.NoError(t, err)
			pairs = append(pairs, string(outer.Key)+string(inner.Key))
		}
	}
	require.Equal(t, []string{"ac", "ab", "aa", "bc", "bb", "ba", "cc", "cb", "ca"}, pairs)

	pairs = nil
	require.NoError(t, db.View(ctx, func(tx *kvstore.Tx) error {
		for outer, err := range tx.All() {
			require.NoError(t, err)
			for inner, err := range tx.All() {
				require.NoError(t, err)
				pairs = append(pairs, string(outer.Key)+string(inner.Key))
			}
		}
		return nil
	}))
	require.Equal(t, []string{"aa", "ab", "ac", "ba", "bb", "bc", "ca", "cb", "cc"}, pairs)
}

// A cursor whose transaction ended under it says so: Err is ErrTxDone.
func TestCursorAfterTxEndReportsTxDone(t *testing.T) {
	db := openTemp(t, kvstore.Options{})
	require.NoError(t, db.Put(b("a"), b("1")))
	require.NoError(t, db.Put(b("b"), b("2")))
	for _, writable := range []bool{false, true} {
		tx, err := db.Begin(context.Background(), writable)
		require.NoError(t, err)
		c, err := tx.Cursor(kvstore.IterOptions{})
		require.NoError(t, err)
		require.True(t, c.First())
		require.NoError(t, tx.Commit())
		require.False(t, c.Next())
		require.ErrorIs(t, c.Err(), kvstore.ErrTxDone, "writable %v", writable)
		require.NoError(t, c.Close())
	}
}

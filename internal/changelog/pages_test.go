package changelog

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/engine"
)

// Filter.Match, which readers apply to the shared window, selects what
// the filtered read's SQL selects: random changes (range deletes with and
// without an end, column family events, keys at a prefix's edges), every
// filter of a few column families and prefixes.
func TestFilterMatchIsTheSQLFilter(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	setup(t, db)
	rng := rand.New(rand.NewPCG(1, 2))
	keys := [][]byte{[]byte("a"), []byte("ab"), []byte("ab\xff"), []byte("ac"), []byte("b"), {0xff}, {0xff, 0xff}, []byte("user/1"), []byte("user0")}
	pick := func() []byte { return keys[rng.IntN(len(keys))] }
	var chs []Change
	for range 300 {
		ch := Change{CF: []string{"x", "y"}[rng.IntN(2)], ExpiryMs: NoExpiry}
		switch rng.IntN(5) {
		case 0:
			ch.Op = OpCreateCF
		case 1:
			ch.Op, ch.Key = OpDeleteRange, pick()
			if rng.IntN(3) > 0 {
				ch.Value = pick()
			}
		case 2:
			ch.Op, ch.Key = OpDelete, pick()
		default:
			ch.Op, ch.Key, ch.Value = OpPut, pick(), []byte("v")
		}
		chs = append(chs, ch)
	}
	fill(t, db, chs...)
	filters := []Filter{{}, {CF: "x"}}
	for _, p := range []string{"a", "ab", "ab\xff", "b", "\xff", "\xff\xff", "user/", "z"} {
		filters = append(filters, Filter{Prefix: []byte(p)}, Filter{CF: "y", Prefix: []byte(p)})
	}
	require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
		all, err := Read(ctx, c, 1, 1000)
		require.NoError(t, err)
		for _, f := range filters {
			want, _, err := ReadFiltered(ctx, c, 1, f, 1000)
			require.NoError(t, err)
			w := testWindow(t, 1, all)
			m := f.Matcher()
			var matched []Change
			for from := int64(1); ; {
				got, err := w.serve(nil, from, m, 1000)
				require.NoError(t, err)
				require.True(t, got.OK)
				for i := range got.Chs {
					if m.Match(&got.Chs[i]) {
						matched = append(matched, got.Chs[i])
					}
				}
				if len(got.Chs) > 0 {
					require.True(t, m.Match(&got.Chs[0]), "the page starts with a match")
					require.True(t, m.Match(&got.Chs[len(got.Chs)-1]), "the page ends with a match")
				}
				require.Greater(t, got.Next, from)
				if from = got.Next; got.End {
					break
				}
			}
			require.Equal(t, seqs(want), seqs(matched), fmt.Sprintf("filter %q %q", f.CF, f.Prefix))
		}
		return nil
	}))
}

// A read from the cache cuts its page at the reader's limit of matching
// changes, from its first match to its last, and goes on from the change
// after the last it returns; the page is the window's own (the reader
// copies what it hands out).
func TestPageCacheLimitAndSharing(t *testing.T) {
	var win []Change
	for i := range 10 {
		win = append(win, Change{Seq: int64(i + 5), CF: "x", Op: OpPut, Key: []byte{byte('a' + i%2)}, Value: []byte("v"), ExpiryMs: NoExpiry})
	}
	pc := testWindow(t, 5, win)
	got, err := pc.serve(nil, 6, Filter{Prefix: []byte("a")}.Matcher(), 2)
	require.NoError(t, err)
	require.Equal(t, []int64{7, 8, 9}, seqs(got.Chs), "from the first match to the second, the change between skipped by the reader")
	require.Equal(t, int64(10), got.Next)
	require.False(t, got.End)
	require.Same(t, pc.at(7), &got.Chs[0], "the window's own changes")

	got, err = pc.serve(nil, 12, Filter{}.Matcher(), 2)
	require.NoError(t, err)
	require.Equal(t, []int64{12, 13}, seqs(got.Chs))
	require.Equal(t, int64(14), got.Next)
	require.False(t, got.End)
	got, err = pc.serve(nil, 13, Filter{}.Matcher(), 2)
	require.NoError(t, err)
	require.Equal(t, []int64{13, 14}, seqs(got.Chs))
	require.Equal(t, int64(15), got.Next)
	require.True(t, got.End)

	got, err = pc.serve(nil, 11, Filter{Prefix: []byte("a")}.Matcher(), 5)
	require.NoError(t, err)
	require.Equal(t, []int64{11, 12, 13}, seqs(got.Chs))
	require.Equal(t, int64(15), got.Next, "past the skipped last change")
	require.True(t, got.End)

	got, err = pc.serve(nil, 14, Filter{Prefix: []byte("a")}.Matcher(), 5)
	require.NoError(t, err)
	require.True(t, got.OK)
	require.Empty(t, got.Chs, "no match: nothing to skip")
	require.Equal(t, int64(15), got.Next)

	got, err = pc.serve(nil, 4, Filter{}.Matcher(), 2)
	require.NoError(t, err)
	require.False(t, got.OK, "before the window: read through SQL")

	got, err = pc.serve(nil, 15, Filter{}.Matcher(), 2)
	require.NoError(t, err)
	require.True(t, got.OK)
	require.Empty(t, got.Chs)
	require.Equal(t, int64(15), got.Next)

	_, err = pc.serve([]byte("another epoch...."), 6, Filter{}.Matcher(), 2)
	require.ErrorIs(t, err, ErrEpoch)

	pc.oldest = 8
	_, err = pc.serve(nil, 6, Filter{}.Matcher(), 2)
	require.ErrorIs(t, err, ErrCompacted)
}

// testWindow returns a window of chs, the changes from base on.
func testWindow(t *testing.T, base int64, chs []Change) *window {
	t.Helper()
	w := &window{base: base, seq0: base, last: base - 1, epoch: make([]byte, EpochLen)}
	for i := range chs {
		w.bytes += len(chs[i].Key) + len(chs[i].Value)
	}
	require.True(t, w.extend(chs))
	return w
}

// A window keeps its changes in chunks that the windows extending it
// share: each sees its own changes whatever is written after it, a read
// stops at the end of a chunk, the oldest changes past the bounds go with
// the chunks they leave empty, and changes that do not follow are
// refused whole.
func TestWindowChunks(t *testing.T) {
	change := func(s int64) Change {
		return Change{Seq: s, CF: "x", Op: OpPut, Key: fmt.Appendf(nil, "k%d", s), ExpiryMs: NoExpiry}
	}
	changes := func(from, to int64) []Change {
		var chs []Change
		for s := from; s <= to; s++ {
			chs = append(chs, change(s))
		}
		return chs
	}
	all := Filter{}.Matcher()
	// readAll reads w whole from from, as readers do, a run at a time.
	readAll := func(w *window, from int64) []int64 {
		var got []int64
		for {
			cr, err := w.serve(nil, from, all, 1<<20)
			require.NoError(t, err)
			require.True(t, cr.OK)
			require.LessOrEqual(t, len(cr.Chs), chunkLen, "one chunk's run at a time")
			got = append(got, seqs(cr.Chs)...)
			if from = cr.Next; cr.End {
				return got
			}
		}
	}
	span := func(from, to int64) []int64 { return seqs(changes(from, to)) }
	// grow returns a window extending w with chs, its bytes counted as
	// Publish and refresh count them.
	grow := func(w *window, chs []Change) (*window, bool) {
		nw := &window{epoch: w.epoch, base: w.base, last: w.last, seq0: w.seq0, chunks: w.chunks, bytes: w.bytes}
		for i := range chs {
			nw.bytes += len(chs[i].Key) + len(chs[i].Value)
		}
		return nw, nw.extend(chs)
	}

	w1 := testWindow(t, 10, changes(10, 10+chunkLen-1)) // one chunk, full
	require.Len(t, w1.chunks, 1)
	w2 := w1.next(published{mark: w1.mark, chs: changes(10+chunkLen, 10+chunkLen+4)}, 1)
	require.Nil(t, w2, "a mark that does not follow")
	w2, ok := grow(w1, changes(10+chunkLen, 10+chunkLen+4))
	require.True(t, ok)
	require.Len(t, w2.chunks, 2)
	require.Equal(t, span(10, 10+chunkLen-1), readAll(w1, 10), "the first window is unchanged")
	require.Equal(t, span(10, 10+chunkLen+4), readAll(w2, 10))
	require.Equal(t, span(20, 10+chunkLen+4), readAll(w2, 20))
	before := *w2
	require.False(t, w2.extend(changes(10+chunkLen+6, 10+chunkLen+7)), "a gap")
	require.False(t, w2.extend([]Change{change(10 + chunkLen + 5), change(10 + chunkLen + 7)}), "a gap inside")
	require.Equal(t, before, *w2, "nothing written")
	_, ok = grow(w2, changes(10+chunkLen+6, 10+chunkLen+7))
	require.False(t, ok)

	// Past PageCacheChanges the oldest go, and their chunks with them.
	last := int64(10 + PageCacheChanges + 3*chunkLen + 7)
	w3, ok := grow(w2, changes(w2.last+1, last))
	require.True(t, ok)
	require.Equal(t, int64(PageCacheChanges), w3.last-w3.base+1)
	require.Equal(t, last-PageCacheChanges+1, w3.base)
	require.Less(t, w3.base-w3.seq0, int64(chunkLen), "no empty chunk kept")
	require.Equal(t, span(w3.base, last), readAll(w3, w3.base))
	require.Equal(t, span(10, 10+chunkLen+4), readAll(w2, 10), "the older window is unchanged")
	cr, err := w3.serve(nil, w3.base-1, all, 10)
	require.NoError(t, err)
	require.False(t, cr.OK, "before the window: read through SQL")
	pc := &PageCache{}
	pc.cur.Store(w3)
	latest, l, ok := pc.Latest()
	require.True(t, ok)
	require.Equal(t, last, l)
	require.Equal(t, span(w3.base, last), seqs(latest))

	// Dropped to nothing by the bytes' bound: empty, and the next change
	// starts a chunk.
	big := change(last + 1)
	big.Value = make([]byte, PageCacheBytes+1)
	w4, ok := grow(w3, []Change{big})
	require.True(t, ok)
	require.Equal(t, last+2, w4.base)
	require.Zero(t, w4.bytes)
	require.Empty(t, w4.chunks)
	w4, ok = grow(w4, changes(last+2, last+3))
	require.True(t, ok)
	require.Equal(t, span(last+2, last+3), readAll(w4, last+2))
	require.Equal(t, span(w3.base, last), readAll(w3, w3.base), "the older window is unchanged")
}

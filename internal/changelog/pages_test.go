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
			w := &window{base: 1, last: int64(len(all)), win: all, epoch: make([]byte, EpochLen)}
			m := f.Matcher()
			got, err := w.serve(nil, 1, m, 1000)
			require.NoError(t, err)
			require.True(t, got.OK)
			var matched []Change
			for i := range got.Chs {
				if m.Match(&got.Chs[i]) {
					matched = append(matched, got.Chs[i])
				}
			}
			require.Equal(t, seqs(want), seqs(matched), fmt.Sprintf("filter %q %q", f.CF, f.Prefix))
			if len(got.Chs) > 0 {
				require.True(t, m.Match(&got.Chs[0]), "the page starts with a match")
				require.True(t, m.Match(&got.Chs[len(got.Chs)-1]), "the page ends with a match")
			}
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
	pc := &window{base: 5, last: 14, win: win, epoch: make([]byte, EpochLen)}
	got, err := pc.serve(nil, 6, Filter{Prefix: []byte("a")}.Matcher(), 2)
	require.NoError(t, err)
	require.Equal(t, []int64{7, 8, 9}, seqs(got.Chs), "from the first match to the second, the change between skipped by the reader")
	require.Equal(t, int64(10), got.Next)
	require.False(t, got.End)
	require.Same(t, &win[2], &got.Chs[0], "the window's own changes")

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

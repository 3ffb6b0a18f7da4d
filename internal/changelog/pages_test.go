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
			got, err := w.serve(nil, 1, f, 1000, nil)
			require.NoError(t, err)
			require.True(t, got.OK)
			require.Equal(t, seqs(want), seqs(got.Chs), fmt.Sprintf("filter %q %q", f.CF, f.Prefix))
		}
		return nil
	}))
}

// A read from the cache cuts its page at the reader's limit of matching
// changes and goes on from the change after the last it returns; the keys
// and values it returns are the reader's own.
func TestPageCacheLimitAndCopies(t *testing.T) {
	var win []Change
	for i := range 10 {
		win = append(win, Change{Seq: int64(i + 5), CF: "x", Op: OpPut, Key: []byte{byte('a' + i%2)}, Value: []byte("v"), ExpiryMs: NoExpiry})
	}
	pc := &window{base: 5, last: 14, win: win, epoch: make([]byte, EpochLen)}
	got, err := pc.serve(nil, 6, Filter{Prefix: []byte("a")}, 2, nil)
	require.NoError(t, err)
	require.Equal(t, []int64{7, 9}, seqs(got.Chs))
	require.Equal(t, int64(10), got.Next)
	got.Chs[0].Key[0] = 'z'
	require.Equal(t, byte('a'), win[2].Key[0])

	got, err = pc.serve(nil, 4, Filter{}, 2, nil)
	require.NoError(t, err)
	require.False(t, got.OK, "before the window: read through SQL")

	got, err = pc.serve(nil, 15, Filter{}, 2, nil)
	require.NoError(t, err)
	require.True(t, got.OK)
	require.Empty(t, got.Chs)
	require.Equal(t, int64(15), got.Next)

	_, err = pc.serve([]byte("another epoch...."), 6, Filter{}, 2, nil)
	require.ErrorIs(t, err, ErrEpoch)

	pc.oldest = 8
	_, err = pc.serve(nil, 6, Filter{}, 2, nil)
	require.ErrorIs(t, err, ErrCompacted)
}

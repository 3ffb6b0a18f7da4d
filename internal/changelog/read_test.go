package changelog

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/engine"
)

func fill(t *testing.T, db *engine.DB, changes ...Change) {
	t.Helper()
	ctx := context.Background()
	r := &Recorder{}
	tx := begin(t, db)
	for _, ch := range changes {
		_, err := r.Record(ctx, tx, ch.CF, ch.Op, ch.Key, ch.Value, ch.ExpiryMs)
		require.NoError(t, err)
	}
	require.NoError(t, tx.Commit())
}

func seqs(chs []Change) []int64 {
	out := make([]int64, len(chs))
	for i, ch := range chs {
		out[i] = ch.Seq
	}
	return out
}

// A filter by column family and prefix returns the matching changes in
// order, and the next position moves past the changes it skipped.
func TestReadFiltered(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	setup(t, db)
	fill(t, db,
		Change{CF: "a", Op: OpCreateCF, ExpiryMs: NoExpiry},                      // 1
		Change{CF: "a", Op: OpPut, Key: []byte("user/1"), ExpiryMs: NoExpiry},    // 2
		Change{CF: "b", Op: OpPut, Key: []byte("user/2"), ExpiryMs: NoExpiry},    // 3
		Change{CF: "a", Op: OpPut, Key: []byte("users"), ExpiryMs: NoExpiry},     // 4
		Change{CF: "a", Op: OpDelete, Key: []byte("user/9"), ExpiryMs: NoExpiry}, // 5
		Change{CF: "a", Op: OpPut, Key: []byte{0xff, 0xff}, ExpiryMs: NoExpiry},  // 6
		Change{CF: "a", Op: OpPut, Key: []byte("zzz"), ExpiryMs: NoExpiry},       // 7
	)
	require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
		got, next, err := ReadFiltered(ctx, c, 0, Filter{}, 100)
		require.NoError(t, err)
		require.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7}, seqs(got))
		require.Equal(t, int64(8), next)

		got, next, err = ReadFiltered(ctx, c, 1, Filter{CF: "a", Prefix: []byte("user/")}, 100)
		require.NoError(t, err)
		require.Equal(t, []int64{2, 5}, seqs(got))
		require.Equal(t, int64(8), next, "past the skipped changes")

		got, next, err = ReadFiltered(ctx, c, 1, Filter{CF: "a", Prefix: []byte("user/")}, 1)
		require.NoError(t, err)
		require.Equal(t, []int64{2}, seqs(got))
		require.Equal(t, int64(3), next, "a full page resumes after its last change")

		got, _, err = ReadFiltered(ctx, c, 1, Filter{Prefix: []byte{0xff}}, 100)
		require.NoError(t, err)
		require.Equal(t, []int64{6}, seqs(got), "a prefix of 0xff bytes has no end bound")

		got, next, err = ReadFiltered(ctx, c, 8, Filter{CF: "nope"}, 100)
		require.NoError(t, err)
		require.Empty(t, got)
		require.Equal(t, int64(8), next, "nothing new: the position stays")

		_, _, err = ReadFiltered(ctx, c, 1, Filter{}, 0)
		require.ErrorIs(t, err, engine.ErrInvalidArgument)
		return nil
	}))
}

// Trim deletes in bounded steps, never the last change, and a read from a
// trimmed position fails with ErrCompacted naming the oldest change.
func TestTrimAndCompacted(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	setup(t, db)
	var chs []Change
	for i := range 10 {
		chs = append(chs, Change{CF: "a", Op: OpPut, Key: []byte{byte(i)}, ExpiryMs: NoExpiry})
	}
	fill(t, db, chs...)

	trim := func(before int64, max int) int64 {
		tx := begin(t, db)
		n, err := Trim(ctx, tx.Conn(), before, max)
		require.NoError(t, err)
		require.NoError(t, tx.Commit())
		return n
	}
	require.Equal(t, int64(3), trim(6, 3), "bounded by max")
	require.Equal(t, int64(2), trim(6, 100), "bounded by before")
	require.Equal(t, int64(4), trim(100, 100), "never the last change")

	require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
		oldest, last, err := Bounds(ctx, c)
		require.NoError(t, err)
		require.Equal(t, [2]int64{10, 10}, [2]int64{oldest, last})
		_, _, err = ReadFiltered(ctx, c, 4, Filter{}, 10)
		require.ErrorIs(t, err, ErrCompacted)
		var ce *CompactedError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, int64(10), ce.Oldest)
		got, _, err := ReadFiltered(ctx, c, 10, Filter{}, 10)
		require.NoError(t, err)
		require.Equal(t, []int64{10}, seqs(got))
		return nil
	}))
	fill(t, db, Change{CF: "a", Op: OpDelete, Key: []byte{1}, ExpiryMs: NoExpiry})
	require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
		got, _, err := ReadFiltered(ctx, c, 11, Filter{}, 10)
		require.NoError(t, err)
		require.Equal(t, []int64{11}, seqs(got), "numbering continues after a trim")
		return nil
	}))

	tx := begin(t, db)
	_, err := Trim(ctx, tx.Conn(), 100, 0)
	require.ErrorIs(t, err, engine.ErrInvalidArgument)
	require.NoError(t, tx.Rollback())
}

// Read returns the changes from a sequence, at most its limit, and a
// limit that changes from call to call (a refresh of the readers' window
// asks for what committed since the last) does not compile its statement
// again: SQLite recompiles a statement whose bound LIMIT changes.
func TestReadLimitKeepsItsStatement(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	setup(t, db)
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		fill(t, db, Change{CF: "x", Op: OpPut, Key: []byte(k), ExpiryMs: NoExpiry})
	}
	require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
		_, _, err := read(ctx, c, 1, 5) // compiled on first use
		require.NoError(t, err)
		for _, tc := range []struct {
			from  int64
			limit int
			want  []int64
		}{{1, 1, []int64{1}}, {2, 3, []int64{2, 3, 4}}, {4, 7, []int64{4, 5}}, {0, 2, []int64{1, 2}}, {6, 4, []int64{}}, {3, 0, []int64{}}} {
			got, recompiled, err := read(ctx, c, tc.from, tc.limit)
			require.NoError(t, err)
			require.Equal(t, tc.want, seqs(got), "from %d, limit %d", tc.from, tc.limit)
			require.False(t, recompiled, "from %d, limit %d", tc.from, tc.limit)
		}
		return nil
	}))
}

// A filtered read whose limit or filter changes from call to call (readers
// of different page sizes and filters share the store's connections) does
// not compile its statement again, and returns the same changes as a read
// that compiled it.
func TestReadFilteredKeepsItsStatement(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	setup(t, db)
	for _, k := range []string{"a1", "b1", "a2", "b2", "a3"} {
		fill(t, db, Change{CF: k[:1], Op: OpPut, Key: []byte(k), ExpiryMs: NoExpiry})
	}
	require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
		_, _, err := queryFiltered(ctx, c, 1, "", nil, nil, 5) // compiled on first use
		require.NoError(t, err)
		for _, tc := range []struct {
			limit int
			cf    string
			pfx   string
			want  []int64
		}{{1, "", "", []int64{1}}, {3, "", "", []int64{1, 2, 3}}, {2, "a", "", []int64{1, 3}}, {7, "", "a", []int64{1, 3, 5}}, {2, "b", "b", []int64{2, 4}}, {4, "a", "b", []int64{}}} {
			var pfx, end any
			if tc.pfx != "" {
				pfx, end = []byte(tc.pfx), []byte{tc.pfx[0] + 1}
			}
			got, recompiled, err := queryFiltered(ctx, c, 1, tc.cf, pfx, end, tc.limit)
			require.NoError(t, err)
			require.Equal(t, tc.want, seqs(got), "limit %d, cf %q, prefix %q", tc.limit, tc.cf, tc.pfx)
			require.False(t, recompiled, "limit %d, cf %q, prefix %q", tc.limit, tc.cf, tc.pfx)
		}
		return nil
	}))
}

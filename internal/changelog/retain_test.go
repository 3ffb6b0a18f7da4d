package changelog

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/engine"
)

// Retention by count and by age, in bounded steps, held back by a named
// consumer unless forced, always keeping the last change.
func TestRetainStep(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	setup(t, db)
	now := int64(0)
	r := &Recorder{Now: func() int64 { return now }}
	for i := range 10 { // one transaction of one change per ms: seq i+1 at ms i*100
		now = int64(i) * 100
		tx := begin(t, db)
		_, err := r.Record(ctx, tx, "a", OpPut, []byte{byte(i)}, nil, NoExpiry)
		require.NoError(t, err)
		require.NoError(t, tx.Commit())
	}
	step := func(ret Retention, nowMs int64, n int) int64 {
		t.Helper()
		tx := begin(t, db)
		d, err := RetainStep(ctx, tx.Conn(), ret, nowMs, n)
		require.NoError(t, err)
		require.NoError(t, tx.Commit())
		return d
	}
	bounds := func() [2]int64 {
		var o, l int64
		require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
			var err error
			o, l, err = Bounds(ctx, c)
			return err
		}))
		return [2]int64{o, l}
	}

	require.Equal(t, int64(0), step(Retention{}, 1000, 100), "no rule keeps everything")
	require.Equal(t, int64(1), step(Retention{MaxCount: 8}, 1000, 1), "bounded by the step")
	require.Equal(t, int64(1), step(Retention{MaxCount: 8}, 1000, 100))
	require.Equal(t, [2]int64{3, 10}, bounds())

	// A consumer at 5 holds back the age rule (which would keep 8..10).
	tx := begin(t, db)
	require.NoError(t, EnsureConsumers(ctx, tx.Conn()))
	ep, err := Epoch(ctx, tx.Conn())
	require.NoError(t, err)
	require.NoError(t, SaveConsumer(ctx, tx.Conn(), "slow", Position{Epoch: ep, Seq: 5}, 0))
	require.NoError(t, tx.Commit())
	require.Equal(t, int64(2), step(Retention{MaxAgeMs: 250}, 950, 100))
	require.Equal(t, [2]int64{5, 10}, bounds())
	require.Equal(t, int64(3), step(Retention{MaxAgeMs: 250, Force: true}, 950, 100))
	require.Equal(t, [2]int64{8, 10}, bounds())

	require.Equal(t, int64(2), step(Retention{MaxAgeMs: 1, Force: true}, 100_000, 100), "all too old: the last stays")
	require.Equal(t, [2]int64{10, 10}, bounds())

	tx = begin(t, db)
	_, err = RetainStep(ctx, tx.Conn(), Retention{}, 0, 0)
	require.ErrorIs(t, err, engine.ErrInvalidArgument)
	_, err = RetainStep(ctx, tx.Conn(), Retention{MaxBytes: -1}, 0, 1)
	require.ErrorIs(t, err, engine.ErrInvalidArgument)
	_, err = RetainStep(ctx, tx.Conn(), Retention{MaxCount: -1}, 0, 1)
	require.ErrorIs(t, err, engine.ErrInvalidArgument)
	require.NoError(t, tx.Rollback())
}

// Retention by bytes keeps the latest changes whose sizes (key, value and
// the fixed overhead) add up to at most MaxBytes.
func TestRetainStepByBytes(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	setup(t, db)
	r := &Recorder{Now: func() int64 { return 0 }}
	for i := range 10 { // each change: a 1-byte key, a 10-byte value
		tx := begin(t, db)
		_, err := r.Record(ctx, tx, "a", OpPut, []byte{byte(i)}, make([]byte, 10), NoExpiry)
		require.NoError(t, err)
		require.NoError(t, tx.Commit())
	}
	size := ChangeSize([]byte{0}, make([]byte, 10))
	step := func(ret Retention, n int) int64 {
		t.Helper()
		tx := begin(t, db)
		d, err := RetainStep(ctx, tx.Conn(), ret, 0, n)
		require.NoError(t, err)
		require.NoError(t, tx.Commit())
		return d
	}
	require.Zero(t, step(Retention{MaxBytes: 10 * size}, 100), "the log fits exactly")
	require.EqualValues(t, 2, step(Retention{MaxBytes: 7*size + size/2}, 2), "bounded by the step")
	require.EqualValues(t, 1, step(Retention{MaxBytes: 7*size + size/2}, 100), "keeps 7 changes")
	require.EqualValues(t, 6, step(Retention{MaxBytes: 1}, 100), "too small for any: the last stays")
}

package changefeed_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/kvstore"
)

func oldest(t *testing.T, s *kvstore.Store) int64 {
	t.Helper()
	r, err := changefeed.NewReader(context.Background(), s, changefeed.Position{}, changefeed.ReaderOptions{})
	require.NoError(t, err)
	defer r.Close()
	cs, err := r.Read(context.Background())
	var ce *changefeed.CompactedError
	if errors.As(err, &ce) {
		return ce.Oldest
	}
	require.NoError(t, err)
	require.NotEmpty(t, cs)
	return cs[0].Seq
}

// The trimmer applies retention by age on the store's clock, in steps,
// holds back at a named consumer's position, and passes it only forced.
func TestTrimmerTrimsByAgeInTheBackgroundAndRespectsConsumers(t *testing.T) {
	s, clock, _ := openStore(t)
	ctx := context.Background()
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{MaxAge: time.Minute}))
	for i := range 10 {
		require.NoError(t, s.Put(fmt.Appendf(nil, "k%d", i), []byte("v")))
	}
	// Seq 1 is the feed's creation event; the consumer has read up to 5.
	require.NoError(t, s.Update(ctx, func(tx *kvstore.Tx) error {
		return changefeed.Commit(tx, "c1", changefeed.Position{Epoch: mustNow(t, s).Epoch, Seq: 5})
	}))

	tr, err := changefeed.StartTrimmer(ctx, s, changefeed.TrimmerOptions{Interval: time.Millisecond, Step: 2})
	require.NoError(t, err)
	// Nothing is old yet: several passes trim nothing.
	time.Sleep(20 * time.Millisecond)
	require.Zero(t, tr.Trimmed())
	require.EqualValues(t, 1, oldest(t, s))

	clock.Advance(2 * time.Minute) // every change is too old now
	require.Eventually(t, func() bool { return tr.Trimmed() == 4 }, 5*time.Second, time.Millisecond)
	require.EqualValues(t, 5, oldest(t, s), "held at the consumer's position")
	require.NoError(t, tr.Close())
	require.NoError(t, tr.Close(), "a second Close is harmless")

	forced, err := changefeed.StartTrimmer(ctx, s, changefeed.TrimmerOptions{Interval: time.Millisecond, Step: 3, Force: true})
	require.NoError(t, err)
	last := mustNow(t, s).Seq - 1
	require.Eventually(t, func() bool { return forced.Trimmed() == last-5 }, 5*time.Second, time.Millisecond)
	require.NoError(t, forced.Close())
	require.Equal(t, last, oldest(t, s), "forced, it trims to the last change, which stays")
}

func TestTrimmerStopsWithTheStoreAndRefusesBadInput(t *testing.T) {
	s, _, _ := openStore(t)
	ctx := context.Background()
	_, err := changefeed.StartTrimmer(ctx, nil, changefeed.TrimmerOptions{})
	require.ErrorIs(t, err, changefeed.ErrInvalidArgument)
	_, err = changefeed.StartTrimmer(ctx, s, changefeed.TrimmerOptions{Step: -1})
	require.ErrorIs(t, err, changefeed.ErrInvalidArgument)
	//lint:ignore SA1012 a nil context is the bad input under test
	_, err = changefeed.StartTrimmer(nil, s, changefeed.TrimmerOptions{})
	require.ErrorIs(t, err, changefeed.ErrInvalidArgument)

	tr, err := changefeed.StartTrimmer(ctx, s, changefeed.TrimmerOptions{Interval: time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	done := make(chan error)
	go func() { done <- tr.Close() }()
	select {
	case err := <-done:
		require.NoError(t, err, "a closed store ends the trimmer without an error")
	case <-time.After(5 * time.Second):
		t.Fatal("the trimmer did not stop with its store")
	}
}

func mustNow(t *testing.T, s *kvstore.Store) changefeed.Position {
	t.Helper()
	p, err := changefeed.Now(context.Background(), s)
	require.NoError(t, err)
	return p
}

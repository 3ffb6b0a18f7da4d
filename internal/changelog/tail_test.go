package changelog

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/engine"
)

type collected struct {
	mu   sync.Mutex
	seqs []int64
	next int64
}

func (c *collected) add(chs []Change, next int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seqs = append(c.seqs, seqs(chs)...)
	c.next = next
	return nil
}

func (c *collected) state() ([]int64, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int64(nil), c.seqs...), c.next
}

// A tail delivers the backlog, then changes committed in this process
// (woken by the notifier) and by another handle on the file (found by
// polling), in order, with progress past changes its filter skips; it
// ends with its context.
func TestTail(t *testing.T) {
	dir := t.TempDir()
	open := func() *engine.DB { return openDB(t, filepath.Join(dir, "s.db")) }
	db, other := open(), open()
	setup(t, db)
	fill(t, db, Change{CF: "a", Op: OpPut, Key: []byte("p/1"), ExpiryMs: NoExpiry})

	n := &Notifier{}
	ctx, cancel := context.WithCancel(context.Background())
	var got collected
	done := make(chan error, 1)
	go func() {
		done <- Tail(ctx, db, 1, TailOptions{Filter: Filter{Prefix: []byte("p/")}, Batch: 2, Notifier: n}, got.add)
	}()
	waitFor := func(want []int64, next int64) {
		t.Helper()
		require.Eventually(t, func() bool {
			s, nx := got.state()
			return len(s) == len(want) && nx == next
		}, 10*time.Second, time.Millisecond)
		s, _ := got.state()
		require.Equal(t, want, s)
	}
	waitFor([]int64{1}, 2)

	// In process, through the notifier.
	r := &Recorder{}
	tx := begin(t, db)
	for _, k := range []string{"p/2", "q/1", "p/3"} {
		_, err := r.Record(context.Background(), tx, "a", OpPut, []byte(k), nil, NoExpiry)
		require.NoError(t, err)
	}
	tx.OnCommit(n.Notify)
	require.NoError(t, tx.Commit())
	waitFor([]int64{1, 2, 4}, 5)

	// Another handle, no notifier: found by polling the commit mark.
	fill(t, other, Change{CF: "a", Op: OpPut, Key: []byte("q/2"), ExpiryMs: NoExpiry})
	waitFor([]int64{1, 2, 4}, 6) // a progress mark past a skipped change
	fill(t, other, Change{CF: "b", Op: OpDelete, Key: []byte("p/9"), ExpiryMs: NoExpiry})
	waitFor([]int64{1, 2, 4, 6}, 7)

	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
}

func TestTailRefusesBadInput(t *testing.T) {
	db := testDB(t)
	noop := func([]Change, int64) error { return nil }
	require.ErrorIs(t, Tail(context.Background(), nil, 1, TailOptions{}, noop), engine.ErrInvalidArgument)
	require.ErrorIs(t, Tail(context.Background(), db, 1, TailOptions{}, nil), engine.ErrInvalidArgument)
	//lint:ignore SA1012 a nil context is refused, which is what is tested
	require.ErrorIs(t, Tail(nil, db, 1, TailOptions{}, noop), engine.ErrInvalidArgument)
}

// A notify with nobody waiting, or many in a row, never blocks.
func TestNotifyNeverBlocks(t *testing.T) {
	var n Notifier
	for range 1000 {
		n.Notify()
	}
	ch := n.Changed()
	n.Notify()
	select {
	case <-ch:
	default:
		t.Fatal("Changed was not closed by Notify")
	}
}

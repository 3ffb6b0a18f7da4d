package tests

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/kvstore"
)

// liteFeedCF is the column family with a feed in TestLiteFSFeed.
const liteFeedCF = "feed"

// TestLiteFSFeed runs a LiteFS primary and replica: the primary writes
// with a feed on, and a Reader on the replica (its store opened
// read-only) tails the feed while LiteFS replicates. The replica receives
// every change, in order, with no gap, and exactly the feed the primary
// holds; a named consumer's position saved on the primary is read on the
// replica, and one cannot be saved there (ErrReadOnly). The tail runs
// with the replica's store on the default options and with ReadHold -1;
// for each it logs the tail latency (from a commit's return on the
// primary, and from the replica's -pos reaching the transaction, to the
// change's arrival in the replica's Next) and the CPU of an idle tail,
// which must stay low (no poll of the log).
func TestLiteFSFeed(t *testing.T) {
	c := startLiteCluster(t)
	ctx := context.Background()

	p, err := kvstore.Open(c.primary.path(liteDB), kvstore.Options{})
	require.NoError(t, err)
	defer p.Close()
	pcf, err := p.ColumnFamilyOrCreate(liteFeedCF)
	require.NoError(t, err)
	require.NoError(t, changefeed.Enable(ctx, p, liteFeedCF, changefeed.Options{KeepValues: true}))
	require.NoError(t, pcf.Put([]byte("k0"), []byte("first")))
	start, err := changefeed.Now(ctx, p)
	require.NoError(t, err)
	require.NoError(t, p.Update(ctx, func(tx *kvstore.Tx) error { return changefeed.Commit(tx, "primary", start) }))
	pos, ok, err := readPos(c.primary, liteDB)
	require.NoError(t, err)
	require.True(t, ok)
	waitPos(t, c.replica, liteDB, pos, liteConvergeBound)

	r, err := kvstore.Open(c.replica.path(liteDB), kvstore.Options{ReadOnly: true})
	require.NoError(t, err)
	defer r.Close()
	saved, err := changefeed.Load(ctx, r, "primary")
	require.NoError(t, err, "the primary's consumer is read on the replica")
	require.Equal(t, start, saved)
	err = r.Update(ctx, func(tx *kvstore.Tx) error { return changefeed.Commit(tx, "replica", saved) })
	require.ErrorIs(t, err, kvstore.ErrReadOnly, "a consumer cannot save its position on the replica")
	_, err = changefeed.Load(ctx, r, "replica")
	require.ErrorIs(t, err, changefeed.ErrNotFound)

	// The tail, with the replica's store on the default options, then
	// with ReadHold off (docs/replication.md: LiteFS applies a transaction
	// only while no read transaction is open on the replica).
	next := 1
	for _, ro := range []struct {
		name string
		opts kvstore.Options
	}{{"defaults", kvstore.Options{ReadOnly: true}}, {"ReadHold -1", kvstore.Options{ReadOnly: true, ReadHold: -1}}} {
		rs, err := kvstore.Open(c.replica.path(liteDB), ro.opts)
		require.NoError(t, err)
		next = liteFeedTail(t, c, p, pcf, rs, ro.name, next, 400)
		require.NoError(t, rs.Close())
	}

	// A consumer's position committed on the primary reaches the replica.
	end, err := changefeed.Now(ctx, r)
	require.NoError(t, err)
	require.NoError(t, p.Update(ctx, func(tx *kvstore.Tx) error { return changefeed.Commit(tx, "primary", end) }))
	pos, _, err = readPos(c.primary, liteDB)
	require.NoError(t, err)
	waitPos(t, c.replica, liteDB, pos, liteConvergeBound)
	saved, err = changefeed.Load(ctx, r, "primary")
	require.NoError(t, err)
	require.Equal(t, end, saved)
	err = r.Update(ctx, func(tx *kvstore.Tx) error { return changefeed.Commit(tx, "primary", end) })
	require.ErrorIs(t, err, kvstore.ErrReadOnly)
}

// liteFeedTail commits txs transactions on the primary p (into pcf, keys
// from k<first>), one every few milliseconds, while a Reader on the
// replica's store r tails the feed from its current end. It checks that
// the replica receives the primary's feed whole and in order, logs the
// tail latency and an idle tail's CPU, and returns first+txs.
func liteFeedTail(t *testing.T, c *liteCluster, p *kvstore.Store, pcf *kvstore.ColumnFamily, r *kvstore.Store, name string, first, txs int) int {
	t.Helper()
	ctx := context.Background()
	from, err := changefeed.Now(ctx, r)
	require.NoError(t, err)
	reader, err := changefeed.NewReader(ctx, r, from, changefeed.ReaderOptions{Filter: changefeed.Filter{CF: liteFeedCF}})
	require.NoError(t, err)
	defer reader.Close()

	// The primary commits a transaction every few milliseconds (one to
	// four puts and deletes) and notes when each commit returned, by the
	// key of its first change; the replica tails at the same time.
	var (
		mu    sync.Mutex
		acked = map[string]time.Time{} // when the commit returned, by its first key
		txids = map[string]uint64{}    // its LiteFS transaction
		// applied is when the replica's position reached a transaction,
		// polled every 200 µs: the tail latency less LiteFS's part.
		applied = map[uint64]time.Time{}
		stop    = make(chan struct{})
		polled  = make(chan error, 1)
	)
	go func() {
		defer close(polled)
		var last uint64
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Microsecond):
			}
			pos, ok, err := readPos(c.replica, liteDB)
			if err != nil {
				polled <- err
				return
			}
			now := time.Now()
			mu.Lock()
			for ; ok && last < pos.TXID; last++ {
				applied[last+1] = now
			}
			mu.Unlock()
		}
	}()
	writeErr := make(chan error, 1)
	go func() {
		defer close(writeErr)
		for i := first; i < first+txs; i++ {
			first := fmt.Sprintf("k%d", i)
			err := p.Update(ctx, func(tx *kvstore.Tx) error {
				h := tx.CF(pcf)
				if err := h.Put([]byte(first), fmt.Appendf(nil, "v%d", i)); err != nil {
					return err
				}
				for j := range i % 4 {
					if j%2 == 0 {
						if err := h.Put(fmt.Appendf(nil, "k%d-%d", i, j), []byte("x")); err != nil {
							return err
						}
					} else if err := h.Delete(fmt.Appendf(nil, "k%d-%d", i, j-1)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				writeErr <- err
				return
			}
			now := time.Now()
			pos, _, err := readPos(c.primary, liteDB)
			if err != nil {
				writeErr <- err
				return
			}
			mu.Lock()
			acked[first], txids[first] = now, pos.TXID
			mu.Unlock()
			time.Sleep(3 * time.Millisecond)
		}
	}()

	var got []changefeed.Change
	var lags []time.Duration
	var arrivals []struct {
		key string
		at  time.Time
	}
	tctx, cancel := context.WithTimeout(ctx, liteConvergeBound+time.Duration(txs)*10*time.Millisecond)
	defer cancel()
	for want := 0; ; {
		ch, err := reader.Next(tctx)
		require.NoError(t, err, "the replica's reader, after %d changes", len(got))
		arrived := time.Now()
		require.EqualValues(t, from.Seq+int64(len(got)), ch.Seq, "%s: the replica receives every change in order, no gap", name)
		got = append(got, ch)
		if ch.Seq == ch.Tx {
			want++
			mu.Lock()
			at, ok := acked[string(ch.Key)]
			mu.Unlock()
			if !ok {
				at = arrived // received before the primary's commit returned
			}
			lags = append(lags, max(arrived.Sub(at), 0))
			arrivals = append(arrivals, struct {
				key string
				at  time.Time
			}{string(ch.Key), arrived})
		}
		if string(ch.Key) == fmt.Sprintf("k%d", first+txs-1) {
			break
		}
	}
	require.NoError(t, <-writeErr)
	close(stop)
	require.NoError(t, <-polled)
	var own []time.Duration // from LiteFS's -pos reaching the transaction to its arrival
	mu.Lock()
	for _, a := range arrivals {
		if at, ok := applied[txids[a.key]]; ok {
			own = append(own, max(a.at.Sub(at), 0))
		}
	}
	mu.Unlock()

	// What the replica received is the primary's feed.
	pr, err := changefeed.NewReader(ctx, p, from, changefeed.ReaderOptions{})
	require.NoError(t, err)
	defer pr.Close()
	primary := readFeed(t, pr, name)
	require.Equal(t, primary, got, "%s: the replica's feed is the primary's", name)
	require.Equal(t, primary[len(primary)-1].Seq+1, reader.Position().Seq)

	q := func(d []time.Duration) string {
		slices.Sort(d)
		at := func(f float64) time.Duration { return d[int(f*float64(len(d)-1))].Round(10 * time.Microsecond) }
		return fmt.Sprintf("median %v, p90 %v, p99 %v, max %v", at(0.5), at(0.9), at(0.99), at(1))
	}
	require.NotEmpty(t, lags)
	require.NotEmpty(t, own)
	t.Logf("%s: replica tail latency over %d transactions (one every ~3 ms), from the primary's commit: %s", name, len(lags), q(lags))
	t.Logf("%s: from the replica's position reaching the transaction (%d of them): %s", name, len(own), q(own))

	// Idle: nothing commits; the reader waits. The process's CPU over the
	// wait is the idle tail's cost (the primary's store is open and idle).
	share := idleTailShare(t, reader, 2*time.Second)
	t.Logf("%s: an idle tail on the replica used %.2f%% of a core", name, 100*share)
	// About 1% measured (with -race too); a reader that read the log at
	// every poll instead of waiting on the commit mark used 4.9%.
	require.Less(t, share, 0.03, "%s: an idle tail does not poll the log", name)
	return first + txs
}

package tests

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// The writes of the LiteFS tests: step i is one transaction on the primary
// that puts w<i> in the default column family and a TTL key t<i> in "ttl";
// every batchEvery-th step writes through batches instead and adds
// batchKeys keys to "batch". A replica's copy is consistent when, in one
// read transaction, it holds exactly steps 1..n for some n: no hole, nothing
// extra, the three column families agreeing.

const (
	liteDB     = "app.db" // the store's name on the LiteFS mounts
	batchEvery = 5
	batchKeys  = 20
)

// liteEpoch is the time of the manual clocks of both sides: TTLs read on
// the replica are then exact.
var liteEpoch = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

func wKey(i int) []byte         { return fmt.Appendf(nil, "w%08d", i) }
func tKey(i int) []byte         { return fmt.Appendf(nil, "t%08d", i) }
func bKey(i, j int) []byte      { return fmt.Appendf(nil, "b%08d-%02d", i, j) }
func stepVal(i int) []byte      { return []byte(strconv.Itoa(i)) }
func ttlOf(i int) time.Duration { return time.Hour + time.Duration(i)*time.Millisecond }

// liteStore is a store opened on one node with the workload's column
// families.
type liteStore struct {
	db             *kvstore.Store
	ttlCF, batchCF *kvstore.ColumnFamily
}

// openLiteStore opens the store at path with a manual clock at liteEpoch,
// creating its column families when writable.
func openLiteStore(t testing.TB, path string, opts kvstore.Options) *liteStore {
	t.Helper()
	opts.Clock = kvstore.NewManualClock(liteEpoch)
	db, err := kvstore.Open(path, opts)
	require.NoError(t, err)
	s := &liteStore{db: db}
	get := db.ColumnFamilyOrCreate
	if opts.ReadOnly {
		get = db.OpenColumnFamily
	}
	s.ttlCF, err = get("ttl")
	require.NoError(t, err)
	s.batchCF, err = get("batch")
	require.NoError(t, err)
	return s
}

// write commits step i.
func (s *liteStore) write(ctx context.Context, i int) error {
	return s.db.Update(ctx, func(tx *kvstore.Tx) error { return s.writeIn(ctx, tx, i) })
}

// writeIn writes step i in tx.
func (s *liteStore) writeIn(ctx context.Context, tx *kvstore.Tx, i int) error {
	if i%batchEvery != 0 {
		if err := tx.Put(wKey(i), stepVal(i)); err != nil {
			return err
		}
		return tx.CF(s.ttlCF).PutTTL(tKey(i), stepVal(i), ttlOf(i))
	}
	var w, tt, b kvstore.Batch
	w.Put(wKey(i), stepVal(i))
	tt.PutTTL(tKey(i), stepVal(i), ttlOf(i))
	for j := range batchKeys {
		b.Put(bKey(i, j), stepVal(i))
	}
	if err := tx.Apply(ctx, &w); err != nil {
		return err
	}
	if err := tx.CF(s.ttlCF).Apply(ctx, &tt); err != nil {
		return err
	}
	return tx.CF(s.batchCF).Apply(ctx, &b)
}

// check reads the store in one read transaction and returns the n such
// that it holds exactly steps 1..n, or an error saying how it is not a
// consistent prefix.
func (s *liteStore) check(ctx context.Context) (n int, err error) {
	err = s.db.View(ctx, func(tx *kvstore.Tx) error {
		n = 0
		for e, err := range tx.All() {
			if err != nil {
				return err
			}
			n++
			if string(e.Key) != string(wKey(n)) || string(e.Value) != string(stepVal(n)) {
				return fmt.Errorf("default column family: entry %d is %q=%q, want %q=%q (a hole or a stray write)",
					n, e.Key, e.Value, wKey(n), stepVal(n))
			}
		}
		k := 0
		for e, err := range tx.CF(s.ttlCF).All() {
			if err != nil {
				return err
			}
			k++
			if string(e.Key) != string(tKey(k)) {
				return fmt.Errorf("ttl column family: entry %d is %q, want %q", k, e.Key, tKey(k))
			}
		}
		if k != n {
			return fmt.Errorf("ttl column family holds %d steps, the default one %d: a torn transaction", k, n)
		}
		if n > 0 {
			d, err := tx.CF(s.ttlCF).TTL(tKey(n))
			if err != nil {
				return fmt.Errorf("TTL of %q: %w", tKey(n), err)
			}
			if d != ttlOf(n) {
				return fmt.Errorf("TTL of %q is %v, want %v", tKey(n), d, ttlOf(n))
			}
		}
		nb, err := tx.CF(s.batchCF).Count()
		if err != nil {
			return err
		}
		if want := int64(batchKeys * (n / batchEvery)); nb != want {
			return fmt.Errorf("batch column family holds %d keys after %d steps, want %d", nb, n, want)
		}
		return nil
	})
	return n, err
}

// ackLog records when each step was acknowledged (its Update returned nil).
type ackLog struct {
	mu    sync.Mutex
	at    []time.Time // at[i-1]: step i
	acked atomic.Int64
}

func (a *ackLog) ack(i int) {
	a.mu.Lock()
	for len(a.at) < i {
		a.at = append(a.at, time.Time{})
	}
	a.at[i-1] = time.Now()
	a.mu.Unlock()
	a.acked.Store(int64(i))
}

// when returns when step i was acknowledged.
func (a *ackLog) when(i int) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	if i < 1 || i > len(a.at) {
		return time.Time{}
	}
	return a.at[i-1]
}

// lagSample is what one replica scan saw.
type lagSample struct {
	seen, acked int           // steps seen; steps acknowledged when the scan began
	stale       time.Duration // how long the first missing step had been acknowledged
}

// summarizeLag returns the median and the largest staleness of the samples.
func summarizeLag(samples []lagSample) (median, worst time.Duration) {
	if len(samples) == 0 {
		return 0, 0
	}
	d := make([]time.Duration, len(samples))
	for i, s := range samples {
		d[i] = s.stale
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2], d[len(d)-1]
}

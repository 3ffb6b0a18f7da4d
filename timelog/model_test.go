package timelog_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/timelog"
)

// model is the plain in-memory meaning of a log: the records in (ts,
// append) order, minus those deleted after they were appended.
type model struct{ recs []timelog.Record }

func (m *model) add(rs ...timelog.Record) {
	for _, r := range rs {
		i, _ := slices.BinarySearchFunc(m.recs, r.Ts, func(x timelog.Record, ts int64) int {
			if x.Ts <= ts {
				return -1
			}
			return 1
		})
		m.recs = slices.Insert(m.recs, i, r)
	}
}

func (m *model) del(lo, hi int64) { // inclusive
	m.recs = slices.DeleteFunc(m.recs, func(r timelog.Record) bool { return r.Ts >= lo && r.Ts <= hi })
}

// randomOptions returns a manual log's options with small random buffer,
// page and compaction sizes, so that a short run takes every path.
func randomOptions(rng *rand.Rand) timelog.Options {
	return manual(timelog.Options{
		MemtableMaxBytes:    24 * (4 + rng.IntN(40)),
		PageMaxBytes:        54 + 8*rng.IntN(40), // 1 to about 100 records
		SealedMaxRuns:       1 + rng.IntN(4),
		Busy:                timelog.BusySilent,
		CompactOverlapPages: 2 + rng.IntN(3),
		CompactMaxPages:     2 + rng.IntN(8),
	})
}

func (m *model) clone() *model { return &model{recs: slices.Clone(m.recs)} }

// same compares record lists, nil and empty alike.
func same(t *testing.T, want, got []timelog.Record, msgAndArgs ...any) {
	t.Helper()
	if len(want) == 0 && len(got) == 0 {
		return
	}
	require.Equal(t, want, got, msgAndArgs...)
}

func (m *model) span(lo, hi int64) []timelog.Record {
	var out []timelog.Record
	for _, r := range m.recs {
		if r.Ts >= lo && r.Ts <= hi {
			out = append(out, r)
		}
	}
	return out
}

func seedOf(t *testing.T) uint64 {
	if s := os.Getenv("TIMELOG_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
		return v
	}
	return uint64(time.Now().UnixNano())
}

type modelSnap struct {
	s *timelog.Snapshot
	m *model
}

func TestModelRandomized(t *testing.T) {
	steps, runs := 5000, 3
	if testing.Short() {
		steps, runs = 1500, 1
	}
	for run := 0; run < runs; run++ {
		seed := seedOf(t) + uint64(run)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Logf("seed %d (rerun with TIMELOG_SEED=%d)", seed, seed)
			runModel(t, seed, steps)
		})
	}
}

func runModel(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	db, _ := openStore(t)
	var (
		mu       sync.Mutex
		dropped  = map[uint64]bool{}
		released = map[uint64]bool{}
		snaps    []modelSnap
	)
	m := &model{}
	appended := map[uint64]bool{}
	opts := randomOptions(rng)
	opts.ReleaseDrainLimit = rng.IntN(3)
	opts.OnDrop = func(r timelog.Record) {
		mu.Lock()
		defer mu.Unlock()
		require.False(t, dropped[r.Handle], "handle %d dropped twice (seed %d)", r.Handle, seed)
		dropped[r.Handle] = true
	}
	opts.OnRelease = func(h uint64) {
		mu.Lock()
		defer mu.Unlock()
		require.True(t, dropped[h], "handle %d released before its drop (seed %d)", h, seed)
		require.False(t, released[h], "handle %d released twice (seed %d)", h, seed)
		released[h] = true
		for _, s := range snaps {
			for _, r := range s.m.recs {
				require.NotEqual(t, h, r.Handle, "handle %d released while a snapshot can return it (seed %d)", h, seed)
			}
		}
	}
	l, err := timelog.Open(context.Background(), db, "model", opts)
	require.NoError(t, err)
	defer func() { _ = l.Close() }()
	next := uint64(1)
	newRec := func() timelog.Record {
		var ts int64
		switch rng.IntN(20) {
		case 0:
			ts = math.MinInt64
		case 1:
			ts = math.MaxInt64
		default:
			ts = int64(rng.IntN(200)) - 100
		}
		next++
		return timelog.Record{Ts: ts, Handle: next}
	}
	randTs := func() int64 {
		if rng.IntN(10) == 0 {
			return []int64{math.MinInt64, math.MaxInt64, math.MinInt64 + 1, math.MaxInt64 - 1}[rng.IntN(4)]
		}
		return int64(rng.IntN(220)) - 110
	}
	// randSpan is a random [lo, hi), lo <= hi.
	randSpan := func() (lo, hi int64) {
		lo, hi = randTs(), randTs()
		return min(lo, hi), max(lo, hi)
	}
	verify := func(step int, what string) {
		got := collect(t, l.All())
		same(t, m.recs, got, "seed %d step %d after %s", seed, step, what)
		lo, hi := randSpan()
		want := m.span(lo, hi-1)
		if lo == hi {
			want = nil
		}
		same(t, want, collect(t, l.Range(lo, hi)), "seed %d step %d range [%d,%d)", seed, step, lo, hi)
		n, err := l.CountRange(lo, hi)
		require.NoError(t, err)
		require.EqualValues(t, len(want), n, "seed %d step %d count", seed, step)
		mn, ok, err := l.Min()
		require.NoError(t, err)
		require.Equal(t, len(m.recs) > 0, ok)
		if ok {
			require.Equal(t, m.recs[0], mn, "seed %d step %d min", seed, step)
		}
		mx, ok, err := l.Max()
		require.NoError(t, err)
		if ok {
			require.Equal(t, m.recs[len(m.recs)-1], mx, "seed %d step %d max", seed, step)
		}
		for _, s := range snaps {
			same(t, s.m.recs, collect(t, s.s.All()), "seed %d step %d: snapshot changed after %s", seed, step, what)
		}
	}
	closeSnap := func(i int) {
		s := snaps[i]
		mu.Lock()
		snaps = slices.Delete(snaps, i, i+1)
		mu.Unlock()
		require.NoError(t, s.s.Close())
	}
	for step := 0; step < steps; step++ {
		var what string
		switch op := rng.IntN(100); {
		case op < 35:
			what = "append"
			r := newRec()
			err := l.Append(r.Ts, r.Handle)
			require.NoError(t, err)
			m.add(r)
			appended[r.Handle] = true
		case op < 45:
			what = "batch"
			b := make([]timelog.Record, 1+rng.IntN(30))
			for i := range b {
				b[i] = newRec()
			}
			require.NoError(t, l.AppendBatch(b))
			m.add(b...)
			for _, r := range b {
				appended[r.Handle] = true
			}
		case op < 52:
			what = "delete range"
			lo, hi := randSpan()
			require.NoError(t, l.DeleteRange(lo, hi))
			if lo < hi {
				m.del(lo, hi-1)
			}
		case op < 54:
			what = "delete before"
			c := randTs()
			require.NoError(t, l.DeleteBefore(c))
			if c > math.MinInt64 {
				m.del(math.MinInt64, c-1)
			}
		case op < 56:
			what = "delete from"
			c := randTs()
			require.NoError(t, l.DeleteFrom(c))
			m.del(c, math.MaxInt64)
		case op < 62:
			what = "flush"
			require.NoError(t, l.Flush(ctx))
		case op < 72:
			what = "maint step"
			_, err := l.MaintStep(ctx)
			require.NoError(t, err)
		case op < 75:
			what = "compact"
			l.Compact()
			drain(t, l)
		case op < 81:
			what = "snapshot"
			if len(snaps) >= 5 { // each holds a read connection
				closeSnap(rng.IntN(len(snaps)))
			}
			s, err := l.Snapshot()
			require.NoError(t, err)
			mu.Lock()
			snaps = append(snaps, modelSnap{s: s, m: m.clone()})
			mu.Unlock()
		case op < 86:
			what = "close snapshot"
			if len(snaps) > 0 {
				closeSnap(rng.IntN(len(snaps)))
			}
		case op < 92:
			what = "tx"
			commit := rng.IntN(3) > 0
			tx, err := db.Begin(ctx, true)
			require.NoError(t, err)
			w := l.In(tx)
			tm := m.clone()
			var txAdded []timelog.Record
			for k := rng.IntN(4); k >= 0; k-- {
				if rng.IntN(4) == 0 {
					lo, hi := randSpan()
					require.NoError(t, w.DeleteRange(lo, hi))
					if lo < hi {
						tm.del(lo, hi-1)
					}
					continue
				}
				b := make([]timelog.Record, 1+rng.IntN(5))
				for i := range b {
					b[i] = newRec()
				}
				require.NoError(t, w.AppendBatch(b))
				tm.add(b...)
				txAdded = append(txAdded, b...)
			}
			require.NoError(t, tx.CF(db.Default()).Put([]byte("k"), []byte(fmt.Sprint(step))))
			if commit {
				require.NoError(t, tx.Commit())
				for _, r := range tm.recs {
					appended[r.Handle] = true
				}
				for _, r := range txAdded {
					appended[r.Handle] = true
				}
				m = tm
			} else {
				require.NoError(t, tx.Rollback())
			}
		case op < 94:
			what = "reopen"
			for len(snaps) > 0 {
				closeSnap(0)
			}
			require.NoError(t, l.Close())
			l, err = timelog.Open(context.Background(), db, "model", opts)
			require.NoError(t, err)
		default:
			what = "nothing"
		}
		verify(step, what)
	}
	for len(snaps) > 0 {
		closeSnap(0)
	}
	compactAll(t, l)
	verify(steps, "final compaction")
	// Every record gone from the model and from the buffers was announced
	// once, and released (no snapshot is open).
	mu.Lock()
	live := map[uint64]bool{}
	for _, r := range m.recs {
		live[r.Handle] = true
		require.False(t, dropped[r.Handle], "live handle %d was dropped (seed %d)", r.Handle, seed)
	}
	for h := range appended {
		require.Equal(t, !live[h], dropped[h], "seed %d: handle %d: deleted records are all dropped once compacted, live ones never", seed, h)
	}
	require.Equal(t, len(appended)-len(live), len(dropped))
	mu.Unlock()
	require.NoError(t, l.Close())
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, len(dropped), len(released), "seed %d: everything dropped is released after Close", seed)
}

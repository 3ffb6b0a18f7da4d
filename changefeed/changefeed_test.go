package changefeed_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/ttl"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func openStore(t testing.TB) (*kvstore.Store, *ttl.ManualClock, string) {
	clock := ttl.NewManualClock(t0)
	path := filepath.Join(t.TempDir(), "feed.db")
	s, err := kvstore.Open(path, kvstore.Options{Clock: clock})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, clock, path
}

// ev is a change reduced to what the tests compare.
type ev struct {
	Op     string
	CF     string
	Key    string
	Value  string
	Expiry int64 // ms after t0, -1: none
}

func evOf(c changefeed.Change) ev {
	e := ev{Op: c.Op.String(), CF: c.CF, Key: string(c.Key), Value: string(c.Value), Expiry: -1}
	if !c.Expiry.IsZero() {
		e.Expiry = c.Expiry.Sub(t0).Milliseconds()
	}
	return e
}

// readAll reads every change from the oldest without waiting, checking the
// sequences are 1, 2, 3... and each change's transaction id is the sequence
// of its transaction's first change.
func readAll(t *testing.T, s *kvstore.Store, f changefeed.Filter) []ev {
	t.Helper()
	ctx := context.Background()
	r, err := changefeed.NewReader(ctx, s, changefeed.Position{}, changefeed.ReaderOptions{Filter: f, Batch: 3})
	require.NoError(t, err)
	var out []ev
	var last int64
	for {
		chs, err := r.Read(ctx)
		require.NoError(t, err)
		if len(chs) == 0 {
			return out
		}
		for _, c := range chs {
			if f.CF == "" && f.Prefix == nil {
				require.Equal(t, last+1, c.Seq, "no gap")
			}
			require.Greater(t, c.Seq, last)
			require.LessOrEqual(t, c.Tx, c.Seq)
			last = c.Seq
			out = append(out, evOf(c))
		}
	}
}

func TestEveryWritePathRecordsItsCommittedChanges(t *testing.T) {
	s, clock, _ := openStore(t)
	ctx := context.Background()
	users, err := s.CreateColumnFamily("users")
	require.NoError(t, err)
	other, err := s.CreateColumnFamily("other")
	require.NoError(t, err)
	require.NoError(t, users.Put([]byte("before"), []byte("x"))) // before the feed: not recorded
	require.NoError(t, changefeed.Enable(ctx, s, "users", changefeed.Options{KeepValues: true}))

	// Outside a transaction.
	require.NoError(t, users.Put([]byte("a"), []byte("1")))
	require.NoError(t, other.Put([]byte("z"), []byte("no feed")))
	require.NoError(t, users.Delete([]byte("a")))
	require.ErrorIs(t, users.Delete([]byte("missing")), kvstore.ErrNotFound) // deletes nothing: no change
	require.NoError(t, users.PutTTL([]byte("t"), []byte("2"), time.Second))
	require.NoError(t, users.Expire([]byte("t"), 2*time.Second))
	require.NoError(t, users.Persist([]byte("t")))
	wrote, err := users.PutIfAbsent([]byte("p"), []byte("3"))
	require.NoError(t, err)
	require.True(t, wrote)
	// A transaction.
	require.NoError(t, s.Update(ctx, func(tx *kvstore.Tx) error {
		u := tx.CF(users)
		require.NoError(t, u.Put([]byte("b"), []byte("4")))
		require.NoError(t, u.Delete([]byte("b")))
		require.NoError(t, tx.CF(other).Put([]byte("y"), []byte("no feed")))
		return u.Put([]byte("c"), []byte("5"))
	}))
	// A rollback records nothing.
	require.Error(t, s.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, tx.CF(users).Put([]byte("gone"), []byte("6")))
		return errors.New("roll back")
	}))
	// A batch, a range delete, an expiry found by a TTL call.
	var b kvstore.Batch
	b.Put([]byte("d"), []byte("7"))
	b.PutTTL([]byte("e"), []byte("8"), time.Second)
	b.Delete([]byte("d"))
	b.Delete([]byte("never"))
	require.NoError(t, users.Apply(ctx, &b))
	n, err := users.DeleteRange(ctx, []byte("c"), []byte("d"))
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	clock.Advance(5 * time.Second)
	require.ErrorIs(t, users.Expire([]byte("e"), time.Second), kvstore.ErrNotFound)
	// Drop and create again.
	require.NoError(t, s.DropColumnFamily("users"))
	_, err = s.CreateColumnFamily("users")
	require.NoError(t, err)

	want := []ev{
		{"put", "users", "a", "1", -1},
		{"delete", "users", "a", "", -1},
		{"put", "users", "t", "2", 1000},
		{"set_ttl", "users", "t", "", 2000},
		{"clear_ttl", "users", "t", "", -1},
		{"put", "users", "p", "3", -1},
		{"put", "users", "b", "4", -1},
		{"delete", "users", "b", "", -1},
		{"put", "users", "c", "5", -1},
		{"put", "users", "d", "7", -1},
		{"put", "users", "e", "8", 1000},
		{"delete", "users", "d", "", -1},
		{"delete_range", "users", "c", "d", -1},
		{"expired", "users", "e", "", 1000},
		{"drop_cf", "users", "", "", -1},
		{"create_cf", "users", "", "", -1},
	}
	require.Equal(t, want, readAll(t, s, changefeed.Filter{}))
	require.Equal(t, want[:1], readAll(t, s, changefeed.Filter{CF: "users", Prefix: []byte("a")})[:1])
	require.Empty(t, readAll(t, s, changefeed.Filter{CF: "other"}))
}

func TestNoValuesUnlessKept(t *testing.T) {
	s, _, _ := openStore(t)
	ctx := context.Background()
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{}))
	require.NoError(t, s.Put([]byte("k"), []byte("v")))
	require.Equal(t, []ev{{"put", "default", "k", "", -1}}, readAll(t, s, changefeed.Filter{}))
	require.NoError(t, changefeed.Disable(ctx, s, "default"))
	require.NoError(t, s.Put([]byte("k2"), []byte("v")))
	require.Len(t, readAll(t, s, changefeed.Filter{}), 1)
	require.ErrorIs(t, changefeed.Disable(ctx, s, "default"), changefeed.ErrNotFound)
	require.ErrorIs(t, changefeed.Enable(ctx, s, "nope", changefeed.Options{}), kvstore.ErrNotFound)
}

// Another handle on the file (as another process would be) turns the feed
// on: this handle's next transaction records.
func TestFeedTurnedOnElsewhereIsSeenByTheNextTransaction(t *testing.T) {
	s, _, path := openStore(t)
	ctx := context.Background()
	require.NoError(t, s.Put([]byte("k0"), []byte("v")))
	s2, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	defer s2.Close()
	require.NoError(t, changefeed.Enable(ctx, s2, "default", changefeed.Options{}))
	require.NoError(t, s.Put([]byte("k1"), []byte("v")))
	require.NoError(t, s.Update(ctx, func(tx *kvstore.Tx) error { return tx.Put([]byte("k2"), []byte("v")) }))
	got := readAll(t, s2, changefeed.Filter{})
	require.Equal(t, []ev{{"put", "default", "k1", "", -1}, {"put", "default", "k2", "", -1}}, got)
}

func TestTailWakesOnCommitAndEndsWithContext(t *testing.T) {
	s, _, _ := openStore(t)
	ctx := context.Background()
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{KeepValues: true}))
	require.NoError(t, s.Put([]byte("old"), []byte("v")))
	now, err := changefeed.Now(ctx, s)
	require.NoError(t, err)
	r, err := changefeed.NewReader(ctx, s, now, changefeed.ReaderOptions{Poll: time.Hour}) // only the in-process wake-up
	require.NoError(t, err)
	go func() {
		time.Sleep(20 * time.Millisecond)
		_ = s.Put([]byte("new"), []byte("v"))
	}()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := r.Next(wctx)
	require.NoError(t, err)
	require.Equal(t, "new", string(c.Key))
	qctx, qcancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer qcancel()
	_, err = r.Next(qctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, r.Close())
	_, err = r.Next(ctx)
	require.ErrorIs(t, err, changefeed.ErrClosed)
}

func TestConsumerCommitsWithItsWritesAndTrimRespectsIt(t *testing.T) {
	s, _, _ := openStore(t)
	ctx := context.Background()
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{MaxCount: 2}))
	for i := range 5 {
		require.NoError(t, s.Put(fmt.Appendf(nil, "k%d", i), []byte("v")))
	}
	r, err := changefeed.NewReader(ctx, s, changefeed.Position{}, changefeed.ReaderOptions{})
	require.NoError(t, err)
	_, err = r.Next(ctx)
	require.NoError(t, err)
	// A rolled-back consumer transaction saves nothing.
	require.Error(t, s.Update(ctx, func(tx *kvstore.Tx) error {
		require.NoError(t, changefeed.Commit(tx, "c1", r.Position()))
		return errors.New("crash")
	}))
	_, err = changefeed.Load(ctx, s, "c1")
	require.ErrorIs(t, err, changefeed.ErrNotFound)
	require.NoError(t, s.Update(ctx, func(tx *kvstore.Tx) error { return changefeed.Commit(tx, "c1", r.Position()) }))
	p, err := changefeed.Load(ctx, s, "c1")
	require.NoError(t, err)
	require.EqualValues(t, 2, p.Seq)

	// The consumer at 2 holds the trim back; forced, it trims to the last 2.
	n, err := changefeed.Trim(ctx, s, 0, false)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	n, err = changefeed.Trim(ctx, s, 0, true)
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	r2, err := changefeed.NewReader(ctx, s, p, changefeed.ReaderOptions{})
	require.NoError(t, err)
	_, err = r2.Read(ctx)
	var ce *changefeed.CompactedError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, changefeed.ErrCompacted)
	require.EqualValues(t, 4, ce.Oldest)

	cs, err := changefeed.Consumers(ctx, s)
	require.NoError(t, err)
	require.Len(t, cs, 1)
	require.NoError(t, changefeed.Reset(ctx, s, "c1"))
	require.ErrorIs(t, changefeed.Reset(ctx, s, "c1"), changefeed.ErrNotFound)

	// A position of another history is refused.
	bad := changefeed.Position{Epoch: make([]byte, 16), Seq: 4}
	requireReadFails(t, s, bad, changefeed.ErrEpoch)
}

func TestSnapshotThenChanges(t *testing.T) {
	s, _, _ := openStore(t)
	ctx := context.Background()
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{}))
	require.NoError(t, s.Put([]byte("a1"), []byte("v")))
	require.NoError(t, s.Put([]byte("b1"), []byte("v")))
	var keys []string
	p, err := changefeed.Snapshot(ctx, s, "default", []byte("a"), func(k, _ []byte) error {
		keys = append(keys, string(k))
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []string{"a1"}, keys)
	require.NoError(t, s.Put([]byte("a2"), []byte("v")))
	r, err := changefeed.NewReader(ctx, s, p, changefeed.ReaderOptions{Filter: changefeed.Filter{Prefix: []byte("a")}})
	require.NoError(t, err)
	chs, err := r.Read(ctx)
	require.NoError(t, err)
	require.Len(t, chs, 1)
	require.Equal(t, "a2", string(chs[0].Key))
}

func TestBadInput(t *testing.T) {
	s, _, _ := openStore(t)
	ctx := context.Background()
	//lint:ignore SA1012 a nil context is the bad input under test
	require.ErrorIs(t, changefeed.Enable(nil, s, "default", changefeed.Options{}), changefeed.ErrInvalidArgument) //nolint:staticcheck
	require.ErrorIs(t, changefeed.Enable(ctx, nil, "default", changefeed.Options{}), changefeed.ErrInvalidArgument)
	require.ErrorIs(t, changefeed.Enable(ctx, s, "default", changefeed.Options{MaxCount: -1}), kvstore.ErrInvalidOption)
	require.ErrorIs(t, changefeed.Commit(nil, "c", changefeed.Position{}), changefeed.ErrInvalidArgument)
	require.NoError(t, s.View(ctx, func(tx *kvstore.Tx) error {
		require.ErrorIs(t, changefeed.Commit(tx, "c", changefeed.Position{}), kvstore.ErrReadOnlyTx)
		return nil
	}))
	_, err := changefeed.NewReader(ctx, s, changefeed.Position{Seq: -1}, changefeed.ReaderOptions{})
	require.ErrorIs(t, err, changefeed.ErrInvalidArgument)
	_, err = changefeed.Load(ctx, s, "")
	require.ErrorIs(t, err, kvstore.ErrInvalidName)
}

func TestExpiryIsRecordedWithItsDeadline(t *testing.T) {
	s, clock, _ := openStore(t)
	ctx := context.Background()
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{}))
	for i, k := range []string{"a", "b", "c", "d"} {
		require.NoError(t, s.PutTTL([]byte(k), []byte("v"), time.Duration(i+1)*time.Second))
	}
	clock.Advance(10 * time.Second)
	// A read outside a transaction leaves the key for the purge.
	_, err := s.Get([]byte("a"))
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	// A read inside a write transaction deletes it there, and records it.
	require.NoError(t, s.Update(ctx, func(tx *kvstore.Tx) error {
		_, err := tx.Get([]byte("b"))
		require.ErrorIs(t, err, kvstore.ErrNotFound)
		return nil
	}))
	// The purge inside a transaction, then in its own.
	require.NoError(t, s.Update(ctx, func(tx *kvstore.Tx) error {
		n, err := tx.PurgeExpiredN(ctx, 1)
		require.Equal(t, 1, n)
		return err
	}))
	n, err := s.PurgeExpired(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	got := readAll(t, s, changefeed.Filter{})
	require.Equal(t, []ev{
		{"put", "default", "a", "", 1000}, {"put", "default", "b", "", 2000},
		{"put", "default", "c", "", 3000}, {"put", "default", "d", "", 4000},
		{"expired", "default", "b", "", 2000},
		{"expired", "default", "a", "", 1000},
		{"expired", "default", "c", "", 3000},
		{"expired", "default", "d", "", 4000},
	}, got)
	// The expiry's At is when it was removed, on the store's clock.
	r, err := changefeed.NewReader(ctx, s, changefeed.Position{Seq: 8}, changefeed.ReaderOptions{})
	require.NoError(t, err)
	c, err := r.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, t0.Add(10*time.Second), c.At.UTC())
}

// A range delete reaches the readers of every prefix its range overlaps,
// and Clear is a range delete of everything.
func TestRangeDeletesReachOverlappingPrefixes(t *testing.T) {
	s, _, _ := openStore(t)
	ctx := context.Background()
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{}))
	_, err := s.DeleteRange(ctx, []byte("a"), []byte("z")) // holds "u..."
	require.NoError(t, err)
	_, err = s.DeleteRange(ctx, []byte("a"), []byte("b")) // does not
	require.NoError(t, err)
	_, err = s.DeleteRange(ctx, []byte("v"), []byte("w")) // past "u..." : does not
	require.NoError(t, err)
	require.NoError(t, s.Clear())
	got := readAll(t, s, changefeed.Filter{Prefix: []byte("u")})
	require.Equal(t, []ev{
		{"delete_range", "default", "a", "z", -1},
		{"delete_range", "default", "", "", -1},
	}, got)
}

// A consumer's saved position is stamped with the store's clock, as every
// other time the feed records.
func TestConsumerUpdatedIsTheStoresClock(t *testing.T) {
	s, clock, _ := openStore(t)
	ctx := context.Background()
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{}))
	pos, err := changefeed.Now(ctx, s)
	require.NoError(t, err)
	clock.Advance(90 * time.Minute)
	require.NoError(t, s.Update(ctx, func(tx *kvstore.Tx) error { return changefeed.Commit(tx, "c1", pos) }))
	all, err := changefeed.Consumers(ctx, s)
	require.NoError(t, err)
	require.Len(t, all, 1)
	require.True(t, t0.Add(90*time.Minute).Equal(all[0].Updated), "updated %v", all[0].Updated)
}

// requireReadFails checks that a Reader of s from pos fails its first Read
// with target.
func requireReadFails(t *testing.T, s *kvstore.Store, pos changefeed.Position, target error) {
	t.Helper()
	ctx := context.Background()
	r, err := changefeed.NewReader(ctx, s, pos, changefeed.ReaderOptions{})
	require.NoError(t, err)
	defer r.Close()
	_, err = r.Read(ctx)
	require.ErrorIs(t, err, target)
}

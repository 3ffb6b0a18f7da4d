package changelog

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/engine"
)

func testDB(t *testing.T) *engine.DB {
	t.Helper()
	return openDB(t, filepath.Join(t.TempDir(), "s.db"))
}

// openDB opens path and switches it to WAL, as the store does at open.
func openDB(t testing.TB, path string) *engine.DB {
	t.Helper()
	db, err := engine.Open(engine.Config{Path: path, Journal: "WAL", Sync: "NORMAL", BusyTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	require.NoError(t, db.WithWriter(context.Background(), func(c *engine.Conn) error {
		return db.SetJournalMode(context.Background(), c)
	}))
	return db
}

func begin(t *testing.T, db *engine.DB) *engine.Tx {
	t.Helper()
	tx, err := db.Begin(context.Background(), true)
	require.NoError(t, err)
	return tx
}

func readAll(t *testing.T, db *engine.DB) []Change {
	t.Helper()
	var out []Change
	require.NoError(t, db.WithReader(context.Background(), func(c *engine.Conn) error {
		var err error
		out, err = Read(context.Background(), c, 1, 1<<20)
		return err
	}))
	return out
}

func setup(t *testing.T, db *engine.DB) {
	t.Helper()
	tx := begin(t, db)
	require.NoError(t, Ensure(context.Background(), tx.Conn(), 1))
	require.NoError(t, tx.Commit())
}

// Changes of committed transactions are numbered from 1 in commit order
// with no gap; a transaction's changes share its id (its first sequence)
// and time; a rolled-back transaction leaves nothing and its numbers are
// used by the next one.
func TestRecordCommitOrderNoGap(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	setup(t, db)
	now := int64(1000)
	r := &Recorder{Now: func() int64 { return now }}

	tx := begin(t, db)
	s, err := r.Record(ctx, tx, "users", OpPut, []byte("a"), []byte("1"), NoExpiry)
	require.NoError(t, err)
	require.Equal(t, int64(1), s)
	s, err = r.Record(ctx, tx, "users", OpSetTTL, []byte("a"), nil, 5000)
	require.NoError(t, err)
	require.Equal(t, int64(2), s)
	require.NoError(t, tx.Commit())

	now = 2000
	tx = begin(t, db)
	_, err = r.Record(ctx, tx, "users", OpDelete, []byte("gone"), nil, NoExpiry)
	require.NoError(t, err)
	require.NoError(t, tx.Rollback())

	now = 3000
	tx = begin(t, db)
	s, err = r.Record(ctx, tx, "logs", OpDeleteRange, []byte("a"), []byte("m"), NoExpiry)
	require.NoError(t, err)
	require.Equal(t, int64(3), s, "the rolled-back transaction gave its sequence back")
	s, err = r.Record(ctx, tx, "logs", OpExpired, []byte("x"), nil, 2500)
	require.NoError(t, err)
	require.Equal(t, int64(4), s)
	require.NoError(t, tx.Commit())

	require.Equal(t, []Change{
		{Seq: 1, Tx: 1, AtMs: 1000, CF: "users", Op: OpPut, Key: []byte("a"), Value: []byte("1"), ExpiryMs: NoExpiry},
		{Seq: 2, Tx: 1, AtMs: 1000, CF: "users", Op: OpSetTTL, Key: []byte("a"), ExpiryMs: 5000},
		{Seq: 3, Tx: 3, AtMs: 3000, CF: "logs", Op: OpDeleteRange, Key: []byte("a"), Value: []byte("m"), ExpiryMs: NoExpiry},
		{Seq: 4, Tx: 3, AtMs: 3000, CF: "logs", Op: OpExpired, Key: []byte("x"), ExpiryMs: 2500},
	}, readAll(t, db))

	r.mu.Lock()
	require.Empty(t, r.txs, "ended transactions are forgotten")
	r.mu.Unlock()
}

// Numbering continues from the table, not from the Recorder: a second
// Recorder (another process) continues the same sequence.
func TestRecordContinuesAcrossRecorders(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	setup(t, db)
	for i, r := range []*Recorder{{}, {}, {}} {
		tx := begin(t, db)
		s, err := r.Record(ctx, tx, "cf", OpPut, []byte{byte(i)}, nil, NoExpiry)
		require.NoError(t, err)
		require.Equal(t, int64(i+1), s)
		require.NoError(t, tx.Commit())
	}
	got := readAll(t, db)
	require.Len(t, got, 3)
	require.Nil(t, got[0].Value, "a put recorded without its value keeps none")
}

// The epoch is made once, survives reopening Ensure, and Reset replaces it
// and empties the history; numbering restarts at 1 in the new epoch.
func TestEpochAndReset(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)

	require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
		_, err := Epoch(ctx, c)
		require.ErrorIs(t, err, engine.ErrNotFound, "no change log yet")
		return nil
	}))
	setup(t, db)
	setup(t, db) // a second Ensure keeps the epoch
	var ep1 []byte
	require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
		var err error
		ep1, err = Epoch(ctx, c)
		return err
	}))
	require.Len(t, ep1, EpochLen)

	r := &Recorder{}
	tx := begin(t, db)
	_, err := r.Record(ctx, tx, "cf", OpPut, []byte("k"), []byte("v"), NoExpiry)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())

	tx = begin(t, db)
	require.NoError(t, Reset(ctx, tx.Conn(), 7))
	require.NoError(t, tx.Commit())
	require.Empty(t, readAll(t, db))
	require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
		ep2, err := Epoch(ctx, c)
		require.NoError(t, err)
		require.NotEqual(t, ep1, ep2)
		return nil
	}))
	tx = begin(t, db)
	s, err := r.Record(ctx, tx, "cf", OpPut, []byte("k"), nil, NoExpiry)
	require.NoError(t, err)
	require.Equal(t, int64(1), s)
	require.NoError(t, tx.Commit())
}

// Bad input: no transaction, a read transaction, the header op.
func TestRecordRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	setup(t, db)
	r := &Recorder{}
	_, err := r.Record(ctx, nil, "cf", OpPut, []byte("k"), nil, NoExpiry)
	require.ErrorIs(t, err, engine.ErrInvalidArgument)

	rtx, err := db.Begin(ctx, false)
	require.NoError(t, err)
	_, err = r.Record(ctx, rtx, "cf", OpPut, []byte("k"), nil, NoExpiry)
	require.ErrorIs(t, err, engine.ErrInvalidArgument)
	require.NoError(t, rtx.Rollback())

	tx := begin(t, db)
	_, err = r.Record(ctx, tx, "cf", OpHeader, nil, nil, NoExpiry)
	require.ErrorIs(t, err, engine.ErrInvalidArgument)
	require.NoError(t, tx.Rollback())
	require.Empty(t, readAll(t, db))
}

func TestOpString(t *testing.T) {
	require.Equal(t, "expired", OpExpired.String())
	require.Equal(t, "delete_range", OpDeleteRange.String())
	require.Equal(t, "op(99)", Op(99).String())
}

func BenchmarkRecord1000(b *testing.B) {
	ctx := context.Background()
	db := openDB(b, filepath.Join(b.TempDir(), "s.db"))
	tx, err := db.Begin(ctx, true)
	require.NoError(b, err)
	require.NoError(b, Ensure(ctx, tx.Conn(), 0))
	require.NoError(b, tx.Commit())
	r := &Recorder{}
	key := make([]byte, 16)
	val := make([]byte, 100)
	b.ResetTimer()
	for b.Loop() {
		tx, err := db.Begin(ctx, true)
		require.NoError(b, err)
		for i := range 1000 {
			key[0], key[1] = byte(i), byte(i>>8)
			if _, err := r.Record(ctx, tx, "cf", OpPut, key, val, NoExpiry); err != nil {
				b.Fatal(err)
			}
		}
		require.NoError(b, tx.Commit())
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/change")
}

package changelog

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/seal"
)

// resealAll runs ResealBatch to the end of the log in transactions of
// batch changes and returns the values rewritten and the values skipped.
// resealEvery converts the log to kr's current state in batches of batch,
// checks that it converted want kept values and skipped none, and returns
// the state.
func resealEvery(t *testing.T, db *engine.DB, kr *seal.Keyring, batch, want int) *seal.State {
	t.Helper()
	st, err := kr.State()
	require.NoError(t, err)
	done, skipped := resealAll(t, db, st, batch)
	require.Equal(t, want, done)
	require.Empty(t, skipped)
	return st
}

func resealAll(t *testing.T, db *engine.DB, st *seal.State, batch int) (done int, skipped []error) {
	t.Helper()
	var after int64
	for {
		tx := begin(t, db)
		n, d, last, sk, err := ResealBatch(context.Background(), tx.Conn(), st, after, batch)
		require.NoError(t, err)
		require.NoError(t, tx.Commit())
		done += d
		skipped = append(skipped, sk...)
		require.GreaterOrEqual(t, last, after)
		after = last
		if n < batch {
			return done, skipped
		}
	}
}

// ResealBatch seals kept values in the clear, seals again those sealed
// under the other data key, and opens them back when the store writes in
// the clear; puts without a value and other changes are left alone, and a
// walk run twice rewrites nothing the second time.
func TestResealBatchConvertsKeptValuesOnly(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	// No change log yet: nothing to convert.
	done, skipped := resealAll(t, db, nil, 4)
	require.Zero(t, done)
	require.Empty(t, skipped)
	setup(t, db)

	kr, err := seal.Create(seal.Secret{Key: bytes.Repeat([]byte{7}, seal.KeySize)})
	require.NoError(t, err)
	fs := NewFeeds(func() int64 { return 1 })
	var rec Recorder
	tx := begin(t, db)
	for i := range 9 {
		k := fmt.Appendf(nil, "k%d", i)
		var v []byte
		if i%3 != 2 {
			v = fmt.Appendf(nil, "v%d", i) // i%3 == 2: a feed that keeps no value
		}
		_, err := rec.Record(ctx, tx, "cf", OpPut, k, v, NoExpiry)
		require.NoError(t, err)
	}
	_, err = rec.Record(ctx, tx, "cf", OpDeleteRange, []byte("a"), []byte("b"), NoExpiry)
	require.NoError(t, err)
	_, err = rec.Record(ctx, tx, "cf", OpPut, []byte("empty"), []byte{}, NoExpiry)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	clear := readAll(t, db)

	form := func() (ops []Op) {
		for _, ch := range readAll(t, db) {
			ops = append(ops, ch.Op)
		}
		return ops
	}
	// What a Reader gets: the values opened with fs's state.
	opened := func(st *seal.State) []Change {
		fs.Seal = func() *seal.State { return st }
		chs := readAll(t, db)
		require.NoError(t, fs.OpenValues(ctx, nil, chs))
		return chs
	}
	want := func(sealed Op) []Op {
		var ops []Op
		for i := range 9 {
			if i%3 == 2 {
				ops = append(ops, OpPut)
			} else {
				ops = append(ops, sealed)
			}
		}
		return append(ops, OpDeleteRange, sealed)
	}

	// Encrypt (the job a new keyring starts with): its state writes
	// sealed and reads both forms.
	st := resealEvery(t, db, kr, 4, 7)
	require.Equal(t, want(OpSealedPut), form())
	require.Equal(t, clear, opened(st))
	done, _ = resealAll(t, db, st, 4)
	require.Zero(t, done, "a second walk finds everything in form")
	_, err = kr.Finish()
	require.NoError(t, err)

	// Rekey: sealed again under the next data key.
	require.NoError(t, kr.BeginRekey(seal.Secret{Key: bytes.Repeat([]byte{8}, seal.KeySize)}))
	resealEvery(t, db, kr, 3, 7)
	_, err = kr.Finish()
	require.NoError(t, err)
	after, err := kr.State()
	require.NoError(t, err)
	require.Equal(t, clear, opened(after), "the new data key alone opens them")
	fs.Seal = func() *seal.State { return st }
	require.ErrorIs(t, fs.OpenValues(ctx, nil, readAll(t, db)), engine.ErrAuth, "the old one no longer does")

	// Decrypt: back to the clear, byte for byte as recorded.
	require.NoError(t, kr.BeginDecrypt())
	resealEvery(t, db, kr, 5, 7)
	require.Equal(t, want(OpPut), form())
	require.Equal(t, clear, readAll(t, db))
	require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
		n, err := c.QueryInt(ctx, `SELECT count(*) FROM "__snkv_changelog" WHERE op = 1 AND value IS NULL`)
		require.Equal(t, int64(3), n, "only the puts whose value was not kept have none; an empty value stays empty")
		return err
	}))
}

// A kept value no key opens is left as it was and returned as skipped,
// with ErrAuth; the walk goes on past it.
func TestResealBatchSkipsAValueNoKeyOpens(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	setup(t, db)
	kr, err := seal.Create(seal.Secret{Key: bytes.Repeat([]byte{7}, seal.KeySize)})
	require.NoError(t, err)
	_, err = kr.Finish()
	require.NoError(t, err)
	st, err := kr.State()
	require.NoError(t, err)
	var rec Recorder
	tx := begin(t, db)
	for _, k := range []string{"a", "b", "c"} {
		_, err := rec.Record(ctx, tx, "cf", OpSealedPut, []byte(k), st.Write.Seal([]byte{st.Write.Gen()}, SealTable("cf"), []byte(k), []byte("v")), NoExpiry)
		require.NoError(t, err)
	}
	_, err = tx.Conn().Exec(ctx, `UPDATE "__snkv_changelog" SET value = X'0000' WHERE key = X'62'`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())

	require.NoError(t, kr.BeginDecrypt())
	dec, err := kr.State()
	require.NoError(t, err)
	done, skipped := resealAll(t, db, dec, 2)
	require.Equal(t, 2, done)
	require.Len(t, skipped, 1)
	require.ErrorIs(t, skipped[0], engine.ErrAuth)
	chs := readAll(t, db)
	require.Equal(t, []Op{OpPut, OpSealedPut, OpPut}, []Op{chs[0].Op, chs[1].Op, chs[2].Op})
	require.Equal(t, []byte{0, 0}, chs[1].Value)
}

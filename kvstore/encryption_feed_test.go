package kvstore_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
)

// feedValues reads a store's whole feed from the start and returns each
// put's key and value, in order.
func feedValues(ctx context.Context, s *kvstore.Store) ([]string, error) {
	r, err := changefeed.NewReader(ctx, s, changefeed.Position{}, changefeed.ReaderOptions{Batch: 16})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []string
	for {
		chs, err := r.Read(ctx)
		if err != nil || len(chs) == 0 {
			return out, err
		}
		for _, c := range chs {
			if c.Op == changefeed.OpPut {
				out = append(out, string(c.Key)+"="+string(c.Value))
			}
		}
	}
}

// A conversion stopped anywhere, its change log part converted, leaves
// every kept value readable, and the next conversion finishes it: the
// feed then returns every value as written, under the last key alone,
// and the file holds none of them in the clear.
func TestInterruptedConversionsConvertTheKeptValues(t *testing.T) {
	skipSealedSuite(t)
	ctx := context.Background()
	path := tempPath(t)
	s, err := kvstore.Open(path, kvstore.Options{UpgradeBatch: 5})
	require.NoError(t, err)
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{KeepValues: true}))
	var want []string
	for i := range 60 {
		k, v := fmt.Sprintf("k%02d", i), fmt.Sprintf("kept-secret-%02d", i)
		require.NoError(t, s.Put([]byte(k), []byte(v)))
		want = append(want, k+"="+v)
	}
	inClear := func() bool { return bytes.Contains(testutil.StoreBytes(t, path), []byte("kept-secret-")) }

	check := func(what string) {
		t.Helper()
		got, err := feedValues(ctx, s)
		require.NoError(t, err, what)
		require.Equal(t, want, got, what)
	}
	// Each conversion is started with a context cancelled after n checks,
	// for n growing until done says it happened; one that recorded its
	// job is then finished by FinishConversion, itself stopped after m
	// checks for m growing: so stops fall inside the walk of the change
	// log too. Every stop leaves the feed readable.
	convert := func(name string, run func(ctx context.Context) error, done func() bool) {
		for n := 1; n < 200; n++ {
			err := run(newCancelAfter(n))
			check(fmt.Sprintf("%s stopped after %d checks", name, n))
			for m := 1; err != nil; m += 2 {
				require.True(t, errors.Is(err, context.Canceled), "%s: %v", name, err)
				require.Less(t, m, 2000, "%s never finished", name)
				err = s.FinishConversion(newCancelAfter(m))
				check(fmt.Sprintf("%s finished, stopped after %d checks", name, m))
			}
			if done() {
				return
			}
		}
		t.Fatalf("%s never recorded its job", name)
	}
	convert("Encrypt", func(ctx context.Context) error { return s.Encrypt(ctx, *rawKey(1)) }, s.Encrypted)
	require.False(t, inClear(), "a kept value in the clear after Encrypt")
	convert("Rekey", func(ctx context.Context) error { return s.Rekey(ctx, *rawKey(2)) }, func() bool {
		old, err := kvstore.Open(path, kvstore.Options{Encryption: rawKey(1), ReadOnly: true})
		if err == nil {
			require.NoError(t, old.Close())
		}
		return errors.Is(err, kvstore.ErrAuth)
	})
	require.NoError(t, s.Close())
	s = openAt(t, path, kvstore.Options{Encryption: rawKey(2), UpgradeBatch: 5})
	check("reopened after Rekey")
	convert("RemoveEncryption", func(ctx context.Context) error { return s.RemoveEncryption(ctx) }, func() bool { return !s.Encrypted() })
	require.NoError(t, s.Close())
	s = openAt(t, path, kvstore.Options{})
	check("reopened in the clear")
}

// A kept value no key opens (damaged, or forged by someone with the file)
// cannot stop a conversion: it is left as it was and reported, as a row
// is, and every other kept value is converted. A put whose feed keeps no
// value stays without one.
func TestConversionLeavesABadKeptValueAndReportsIt(t *testing.T) {
	ctx := context.Background()
	path := tempPath(t)
	s, err := kvstore.Open(path, kvstore.Options{Encryption: rawKey(1)})
	require.NoError(t, err)
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{KeepValues: true}))
	other, err := s.CreateColumnFamily("other")
	require.NoError(t, err)
	require.NoError(t, changefeed.Enable(ctx, s, "other", changefeed.Options{}))
	for _, k := range []string{"a", "b", "c"} {
		require.NoError(t, s.Put([]byte(k), []byte("value of "+k)))
	}
	require.NoError(t, other.Put([]byte("o"), []byte("not kept")))
	require.NoError(t, s.Close())

	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE "__snkv_changelog" SET value = substr(value, 1, 10) || X'00' || substr(value, 12) WHERE key = X'62'`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s = openAt(t, path, kvstore.Options{Encryption: rawKey(1)})
	var bad *kvstore.BadRowsError
	require.ErrorAs(t, s.Rekey(ctx, *rawKey(2)), &bad)
	require.Equal(t, int64(1), bad.Rows)
	require.Len(t, bad.Problems, 1)
	require.Contains(t, bad.Problems[0], "change log")
	_, err = feedValues(ctx, s)
	require.ErrorIs(t, err, kvstore.ErrAuth, "the damaged value fails as before")
	require.ErrorAs(t, s.RemoveEncryption(ctx), &bad)
	require.Equal(t, int64(1), bad.Rows)
	require.NoError(t, s.Close())

	db, err = sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query(`SELECT cf, op, ifnull(key, X''), value FROM "__snkv_changelog" WHERE op IN (1, 9) ORDER BY seq`)
	require.NoError(t, err)
	defer rows.Close()
	var got []string
	for rows.Next() {
		var cf string
		var op int
		var key, value []byte
		require.NoError(t, rows.Scan(&cf, &op, &key, &value))
		if op == 9 {
			value = []byte("sealed")
		} else if value == nil {
			value = []byte("NULL")
		}
		got = append(got, fmt.Sprintf("%s %d %s %s", cf, op, key, value))
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"default 1 a value of a", "default 9 b sealed", "default 1 c value of c", "other 1 o NULL"}, got)
}

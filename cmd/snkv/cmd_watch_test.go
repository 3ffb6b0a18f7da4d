package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// feedFixture writes a store whose "users" column family has a feed that
// keeps values: a put, a put with a TTL, a binary key, a delete; and a
// change of the default column family, which has no feed.
func feedFixture(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "feed.db")
	db, err := kvstore.Open(path, kvstore.Options{Clock: kvstore.NewManualClock(t0)})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	users, err := db.CreateColumnFamily("users")
	require.NoError(t, err)
	require.NoError(t, changefeed.Enable(context.Background(), db, "users", changefeed.Options{KeepValues: true}))
	require.NoError(t, users.Put([]byte("a1"), []byte("alice")))
	require.NoError(t, users.PutTTL([]byte("b1"), []byte("bob"), time.Minute))
	require.NoError(t, users.Put([]byte("a\xff"), []byte("bin")))
	require.NoError(t, users.Delete([]byte("a1")))
	require.NoError(t, db.Put([]byte("nofeed"), []byte("x")))
	return path
}

func TestWatchOnce(t *testing.T) {
	path := feedFixture(t)
	at := t0.UnixMilli()
	exp := t0.Add(time.Minute).UnixMilli()
	r := cli(t, nil, "watch", path, "--once")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []string{
		`{"seq":1,"tx":1,"at_ms":` + itoa(at) + `,"cf":"users","op":"put","key":"a1","value":"alice"}`,
		`{"seq":2,"tx":2,"at_ms":` + itoa(at) + `,"cf":"users","op":"put","key":"b1","value":"bob","expire_ms":` + itoa(exp) + `}`,
		`{"seq":3,"tx":3,"at_ms":` + itoa(at) + `,"cf":"users","op":"put","key_base64":"Yf8=","value":"bin"}`,
		`{"seq":4,"tx":4,"at_ms":` + itoa(at) + `,"cf":"users","op":"delete","key":"a1"}`,
	}, lines(r.stdout))

	r = cli(t, nil, "watch", path, "--once", "--cf", "USERS", "--prefix", "a", "--from", "2")
	require.Equal(t, 0, r.code, r.stderr)
	require.Len(t, lines(r.stdout), 2)
	require.Contains(t, r.stdout, `"seq":3`)
	require.Contains(t, r.stdout, `"seq":4`)

	r = cli(t, nil, "watch", path, "--once", "--from", "now")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stdout)
}

func TestWatchBadInput(t *testing.T) {
	path := feedFixture(t)
	for _, from := range []string{"0", "-3", "soon"} {
		r := cli(t, nil, "watch", path, "--once", "--from", from)
		require.Equal(t, 2, r.code, from)
		require.Contains(t, r.stderr, "--from")
		requireClean(t, r)
	}
	r := cli(t, nil, "watch", path, "--once", "--hex", "--prefix", "zz")
	require.Equal(t, 2, r.code)
	requireClean(t, r)
}

func TestConsumers(t *testing.T) {
	path := feedFixture(t)
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	ctx := context.Background()
	pos, err := changefeed.Now(ctx, db)
	require.NoError(t, err)
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error { return changefeed.Commit(tx, "indexer", pos) }))
	require.NoError(t, db.Close())

	r := cli(t, nil, "consumers", path, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Len(t, lines(r.stdout), 1)
	require.Contains(t, r.stdout, `"name":"indexer","seq":5`)
	r = cli(t, nil, "consumers", path)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "indexer")

	r = cli(t, nil, "consumers", path, "--reset", "indexer")
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "consumers", path, "--reset", "indexer")
	require.Equal(t, 3, r.code, r.stdout)
	requireClean(t, r)
	r = cli(t, nil, "consumers", path, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stdout)
}

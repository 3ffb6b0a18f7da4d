package changefeed_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/ttl"
)

// quickKDF keeps password opens quick in tests.
var quickKDF = kvstore.KDF{Time: 1, MemoryKiB: 64, Threads: 1}

func encrypted(pass string) *kvstore.Encryption {
	return &kvstore.Encryption{Password: []byte(pass), KDF: quickKDF}
}

// rawFiles returns the bytes of a store's file and WAL, as anyone with the
// files would read them.
func rawFiles(t *testing.T, path string) []byte {
	t.Helper()
	return testutil.StoreBytes(t, path)
}

const secretMark = "kept-value-in-the-clear"

// An encrypted store's feed keeps values sealed: neither the file nor the
// WAL holds one in the clear, a Reader gets them back (after a reopen too),
// and a wrong password is still refused at open.
func TestEncryptedStoreSealsKeptValues(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "enc.db")
	open := func(pass string) (*kvstore.Store, error) {
		return kvstore.Open(path, kvstore.Options{Encryption: encrypted(pass), Clock: ttl.NewManualClock(t0)})
	}
	s, err := open("right")
	require.NoError(t, err)
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{KeepValues: true}))
	var want []ev
	require.NoError(t, s.Update(ctx, func(tx *kvstore.Tx) error {
		for i := range 50 {
			k, v := fmt.Sprintf("k%02d", i), fmt.Sprintf("%s %d %s", secretMark, i, bytes.Repeat([]byte("x"), i*20))
			if err := tx.Put([]byte(k), []byte(v)); err != nil {
				return err
			}
			want = append(want, ev{"put", "default", k, v, -1})
		}
		return nil
	}))
	require.NoError(t, s.Put([]byte("empty"), []byte{}))
	want = append(want, ev{"put", "default", "empty", "", -1})
	require.Equal(t, want, readAll(t, s, changefeed.Filter{}))
	require.False(t, bytes.Contains(rawFiles(t, path), []byte(secretMark)), "a kept value in the clear in the file or the WAL")
	require.NoError(t, s.Close())
	require.False(t, bytes.Contains(rawFiles(t, path), []byte(secretMark)), "a kept value in the clear after close")

	_, err = open("wrong")
	require.ErrorIs(t, err, kvstore.ErrAuth)
	s, err = open("right")
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, want, readAll(t, s, changefeed.Filter{Prefix: []byte("")}))
}

// A sealed value is bound to its column family and key: moved to another
// change's row (someone with the file), it fails to open with ErrAuth
// rather than reading as that change's value.
func TestSealedValueMovedToAnotherChangeFailsAuth(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "enc.db")
	enc := &kvstore.Encryption{Key: bytes.Repeat([]byte{9}, 32)}
	s, err := kvstore.Open(path, kvstore.Options{Encryption: enc})
	require.NoError(t, err)
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{KeepValues: true}))
	require.NoError(t, s.Put([]byte("a"), []byte("value of a")))
	require.NoError(t, s.Put([]byte("b"), []byte("value of b")))
	require.NoError(t, s.Close())

	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE "__snkv_changelog" SET value = (SELECT value FROM "__snkv_changelog" WHERE key = X'61') WHERE key = X'62'`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err = kvstore.Open(path, kvstore.Options{Encryption: enc})
	require.NoError(t, err)
	defer s.Close()
	requireReadFails(t, s, changefeed.Position{}, kvstore.ErrAuth)
}

// A store encrypted after its feed was told to keep values: Encrypt seals
// the values kept before too, so that neither the file nor the WAL holds
// one in the clear once it returns, and a Reader returns them all; the
// values kept after are sealed as they are written.
func TestEncryptSealsTheValuesKeptBefore(t *testing.T) {
	s, _, path := openStore(t)
	ctx := context.Background()
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{KeepValues: true}))
	want := keepValues(t, s, "before", 40)
	require.True(t, bytes.Contains(rawFiles(t, path), []byte(secretMark)), "the test's values are in the clear before Encrypt")
	require.NoError(t, s.Encrypt(ctx, kvstore.Encryption{Key: make([]byte, 32)}))
	require.False(t, bytes.Contains(rawFiles(t, path), []byte(secretMark)), "a value kept before Encrypt is still in the clear")
	require.NoError(t, s.Put([]byte("after"), []byte(secretMark)))
	want = append(want, ev{"put", "default", "after", secretMark, -1})
	require.Equal(t, want, readAll(t, s, changefeed.Filter{}))
	require.False(t, bytes.Contains(rawFiles(t, path), []byte(secretMark)))
	// The feed's tables are not the store's rows: the integrity check passes.
	require.NoError(t, s.IntegrityCheck(ctx))
}

// keepValues writes n puts (one empty value, the rest marked secretMark),
// a delete and a put into another column family without values kept, and
// returns the changes the feed of "default" records for them.
func keepValues(t *testing.T, s *kvstore.Store, prefix string, n int) []ev {
	t.Helper()
	var want []ev
	require.NoError(t, s.Update(context.Background(), func(tx *kvstore.Tx) error {
		for i := range n {
			k, v := fmt.Sprintf("%s%03d", prefix, i), fmt.Sprintf("%s %s %d", secretMark, prefix, i)
			if i == 3 {
				v = ""
			}
			if err := tx.Put([]byte(k), []byte(v)); err != nil {
				return err
			}
			want = append(want, ev{"put", "default", k, v, -1})
		}
		return tx.Delete([]byte(prefix + "000"))
	}))
	return append(want, ev{"delete", "default", prefix + "000", "", -1})
}

// Rekey seals the values kept before under the new data key, and
// RemoveEncryption puts them back in the clear: a Reader from the start
// returns every value as written after each, and after a reopen.
func TestRekeyAndDecryptConvertTheKeptValues(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "enc.db")
	opts := kvstore.Options{Encryption: &kvstore.Encryption{Key: bytes.Repeat([]byte{1}, 32)}, Clock: ttl.NewManualClock(t0), UpgradeBatch: 7}
	s, err := kvstore.Open(path, opts)
	require.NoError(t, err)
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{KeepValues: true}))
	want := keepValues(t, s, "one", 30)

	require.NoError(t, s.Rekey(ctx, kvstore.Encryption{Key: bytes.Repeat([]byte{2}, 32)}))
	want = append(want, keepValues(t, s, "two", 20)...)
	require.Equal(t, want, readAll(t, s, changefeed.Filter{}), "after Rekey")
	require.False(t, bytes.Contains(rawFiles(t, path), []byte(secretMark)))

	// A second re-key: the values of the first generation are resealed
	// twice, those of the second once.
	require.NoError(t, s.Rekey(ctx, kvstore.Encryption{Key: bytes.Repeat([]byte{3}, 32)}))
	require.Equal(t, want, readAll(t, s, changefeed.Filter{}), "after a second Rekey")
	require.NoError(t, s.Close())
	opts.Encryption = &kvstore.Encryption{Key: bytes.Repeat([]byte{3}, 32)}
	s, err = kvstore.Open(path, opts)
	require.NoError(t, err)
	require.Equal(t, want, readAll(t, s, changefeed.Filter{}), "after Rekey and a reopen")

	require.NoError(t, s.RemoveEncryption(ctx))
	require.Equal(t, want, readAll(t, s, changefeed.Filter{}), "after RemoveEncryption")
	require.NoError(t, s.Close())
	s, err = kvstore.Open(path, kvstore.Options{Clock: ttl.NewManualClock(t0)})
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, want, readAll(t, s, changefeed.Filter{}), "in the clear, reopened without a key")
}

package changefeed_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/changefeed"
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
	var all []byte
	for _, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			require.NoError(t, err)
		}
		all = append(all, b...)
	}
	return all
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
	r, err := changefeed.NewReader(ctx, s, changefeed.Position{}, changefeed.ReaderOptions{})
	require.NoError(t, err)
	_, err = r.Read(ctx)
	require.ErrorIs(t, err, kvstore.ErrAuth)
}

// A store encrypted after its feed was told to keep values: the values
// kept before stay as they were (in the clear), those after are sealed,
// and a Reader returns both.
func TestFeedOfAStoreEncryptedLaterSealsFromThenOn(t *testing.T) {
	s, _, path := openStore(t)
	ctx := context.Background()
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{KeepValues: true}))
	require.NoError(t, s.Put([]byte("a"), []byte("clear")))
	require.NoError(t, s.Encrypt(ctx, kvstore.Encryption{Key: make([]byte, 32)}))
	require.NoError(t, s.Put([]byte("b"), []byte(secretMark)))
	require.Equal(t, []ev{{"put", "default", "a", "clear", -1}, {"put", "default", "b", secretMark, -1}}, readAll(t, s, changefeed.Filter{}))
	require.False(t, bytes.Contains(rawFiles(t, path), []byte(secretMark)))
	// The feed's tables are not the store's rows: the integrity check passes.
	require.NoError(t, s.IntegrityCheck(ctx))
}

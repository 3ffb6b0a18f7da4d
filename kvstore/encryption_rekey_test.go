package kvstore_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// headerWraps returns the wrapped data keys of every slot of the encryption
// header h, read as docs/format.md lays it out (and of the header a re-key
// ends with, which a re-key's header carries).
func headerWraps(t *testing.T, h []byte) [][]byte {
	t.Helper()
	require.GreaterOrEqual(t, len(h), 27, "header too short")
	require.Equal(t, "snkvseal", string(h[:8]))
	version, job, n := h[8], h[10], int(h[27])
	rest := h[28:]
	if version >= 2 {
		rest = rest[:len(rest)-4] // the checksum
	}
	var out [][]byte
	for range n {
		require.GreaterOrEqual(t, len(rest), 28)
		wl := int(binary.BigEndian.Uint16(rest[26:]))
		rest = rest[28:]
		require.GreaterOrEqual(t, len(rest), wl)
		out = append(out, rest[:wl])
		rest = rest[wl:]
	}
	if job == 2 {
		fl := int(binary.BigEndian.Uint32(rest))
		out = append(out, headerWraps(t, rest[4:4+fl])...)
	}
	return out
}

// liveHeader reads the store's encryption header as another tool would.
func liveHeader(t *testing.T, path string) []byte {
	t.Helper()
	db := rawDB(t, "file:"+path+"?mode=ro")
	defer db.Close()
	var h []byte
	require.NoError(t, db.QueryRow(`SELECT value FROM __snkv_meta WHERE name = 'encryption'`).Scan(&h))
	return h
}

// requireOnlyLiveWraps searches the store's main file and WAL for every
// wrapped data key of every header in written: only the live header's may
// be there, and no header but the live one. A wrapping under a secret a re-key retired opens the data key with
// that secret (a header rebuilt around it and put back in the meta row).
func requireOnlyLiveWraps(t *testing.T, path string, written [][]byte, when string) {
	t.Helper()
	live := liveHeader(t, path)
	liveSet := map[string]bool{}
	for _, w := range headerWraps(t, live) {
		liveSet[string(w[:24])] = true // a wrap's random nonce names it
	}
	var files []byte
	for _, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		if err == nil {
			files = append(files, b...)
		}
	}
	retired := 0
	for _, h := range written {
		for _, w := range headerWraps(t, h) {
			if liveSet[string(w[:24])] {
				continue
			}
			retired++
			require.False(t, bytes.Contains(files, w[:24]), "%s: a slot of an earlier header (%d bytes) is still in the files", when, len(h))
		}
	}
	require.Positive(t, retired, "%s: no earlier header was recorded", when)
	// Every copy of the header's magic is the live header (a page of the
	// WAL holds one more copy of it).
	for i := 0; ; {
		j := bytes.Index(files[i:], []byte("snkvseal"))
		if j < 0 {
			break
		}
		i += j
		require.True(t, bytes.HasPrefix(files[i:], live), "%s: an encryption header other than the live one is in the files", when)
		i += len(live)
	}
}

// After a re-key no wrapping of a data key under any secret but the live
// one is left in the file, its WAL or its free pages: while the store is
// still open, after Close, and after an interrupted re-key that Open
// finished.
func TestRekeyRetiresTheOldSecret(t *testing.T) {
	written, stop := kvstore.RecordHeaders()
	defer stop()
	fill := func(s *kvstore.Store) {
		require.NoError(t, s.Update(context.Background(), func(tx *kvstore.Tx) error {
			for i := range 3000 {
				if err := tx.Put(fmt.Appendf(nil, "k%05d", i), fmt.Appendf(nil, "value %d", i)); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	for _, c := range []struct {
		name     string
		from, to *kvstore.Encryption
	}{
		{"password to password", pw("alpha"), pw("beta")},
		{"key to key", rawKey(1), rawKey(2)},
		{"password to key", pw("alpha"), rawKey(3)},
		{"key to password", rawKey(4), pw("gamma")},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := tempPath(t)
			s := openAt(t, path, kvstore.Options{Encryption: c.from, UpgradeBatch: 500})
			fill(s)
			before := liveHeader(t, path)
			require.NoError(t, s.Rekey(context.Background(), *c.to))
			all := append(written(), before)
			requireOnlyLiveWraps(t, path, all, "open")
			require.NoError(t, s.Close())
			requireOnlyLiveWraps(t, path, all, "closed")
			_, err := kvstore.Open(path, kvstore.Options{Encryption: c.from})
			require.ErrorIs(t, err, kvstore.ErrAuth)
			s = openAt(t, path, kvstore.Options{Encryption: c.to})
			require.Len(t, contents(t, s.Default()), 3000)
		})
	}

	t.Run("interrupted, finished by Open", func(t *testing.T) {
		for _, finisher := range []*kvstore.Encryption{pw("old"), pw("new")} {
			path := tempPath(t)
			s := openAt(t, path, kvstore.Options{Encryption: pw("old"), UpgradeBatch: 100})
			fill(s)
			before := liveHeader(t, path)
			// Stop the re-key once it has recorded its job.
			for n := 5; ; n += 5 {
				err := s.Rekey(newCancelAfter(n), *pw("new"))
				require.Error(t, err, "the re-key finished within %d checks of its context", n)
				if bytes.Count(liveHeader(t, path), []byte("snkvseal")) == 2 {
					break // the re-key's header holds the one it ends with
				}
			}
			require.NoError(t, s.Close())
			s = openAt(t, path, kvstore.Options{Encryption: finisher, UpgradeBatch: 100})
			all := append(written(), before)
			requireOnlyLiveWraps(t, path, all, "after the open that finished it")
			require.Len(t, contents(t, s.Default()), 3000)
			require.NoError(t, s.Close())
			requireOnlyLiveWraps(t, path, all, "closed")
			_, err := kvstore.Open(path, kvstore.Options{Encryption: pw("old")})
			require.ErrorIs(t, err, kvstore.ErrAuth)
		}
	})
}

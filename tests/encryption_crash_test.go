package tests

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

const sealEnvPath = "SNKV_SEAL_CHILD_PATH"

// The two keys the killed conversions move a store between.
var (
	sealKeyA = &kvstore.Encryption{Key: bytes.Repeat([]byte{0xa1}, 32)}
	sealKeyB = &kvstore.Encryption{Key: bytes.Repeat([]byte{0xb2}, 32)}
)

// openAnySecret opens the store at path with whichever of no secret, key A
// and key B opens it (an open finishes a conversion a crash stopped), and
// says which did.
func openAnySecret(path string, batch int) (*kvstore.Store, *kvstore.Encryption, error) {
	var errs []error
	for _, enc := range []*kvstore.Encryption{nil, sealKeyA, sealKeyB} {
		s, err := kvstore.Open(path, kvstore.Options{Encryption: enc, UpgradeBatch: batch})
		if err == nil {
			return s, enc, nil
		}
		if !errors.Is(err, kvstore.ErrAuth) {
			return nil, nil, err
		}
		errs = append(errs, err)
	}
	return nil, nil, fmt.Errorf("no secret opens the store: %w", errors.Join(errs...))
}

// TestSealChild is the child process of TestSealConversionsKilled: it opens
// the store with the secret that opens it and moves it one step along the
// cycle clear -> key A -> key B -> clear, again and again. Run directly, it
// does nothing.
func TestSealChild(t *testing.T) {
	testutil.ChildOnly(t)
	path := os.Getenv(sealEnvPath)
	ctx := context.Background()
	fmt.Println("started")
	for {
		s, enc, err := openAnySecret(path, 25)
		require.NoError(t, err)
		if enc != nil {
			// A value kept sealed under the store's key, for the next
			// conversion to convert: a put of a value the key has already.
			i := rand.IntN(25)
			require.NoError(t, s.Put(fmt.Appendf(nil, "k%05d", i), fmt.Appendf(nil, "value %d", i)))
		}
		switch enc {
		case nil:
			err = s.Encrypt(ctx, *sealKeyA)
		case sealKeyA:
			err = s.Rekey(ctx, *sealKeyB)
		default:
			err = s.RemoveEncryption(ctx)
		}
		require.NoError(t, err)
		require.NoError(t, s.Close())
		fmt.Println("step")
	}
}

// sealContent fills a store for the conversion test: two column families,
// one with TTLs, and a time series' values would be the same path; the
// default one has a feed that keeps its values, which the conversions
// convert too.
func sealContent(t *testing.T, path string, n int) {
	s, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	require.NoError(t, changefeed.Enable(context.Background(), s, "default", changefeed.Options{KeepValues: true}))
	users, err := s.CreateColumnFamily("users")
	require.NoError(t, err)
	require.NoError(t, s.Update(context.Background(), func(tx *kvstore.Tx) error {
		for i := range n {
			if err := tx.Put(fmt.Appendf(nil, "k%05d", i), fmt.Appendf(nil, "value %d", i)); err != nil {
				return err
			}
			if err := tx.CF(users).PutTTL(fmt.Appendf(nil, "u%05d", i), fmt.Appendf(nil, "session %d", i), 48*time.Hour); err != nil {
				return err
			}
		}
		return nil
	}))
	require.NoError(t, s.Close())
}

// checkSealContent checks every value (and that the TTLs survived), and
// every value the feed kept.
func checkSealContent(t *testing.T, s *kvstore.Store, n int) {
	r, err := changefeed.NewReader(context.Background(), s, changefeed.Position{}, changefeed.ReaderOptions{})
	require.NoError(t, err)
	kept := 0
	for _, c := range readFeed(t, r, "sealed content") {
		if c.Op == changefeed.OpPut {
			var i int
			_, err := fmt.Sscanf(string(c.Key), "k%05d", &i)
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf("value %d", i), string(c.Value), "change %d", c.Seq)
			kept++
		}
	}
	require.NoError(t, r.Close())
	require.GreaterOrEqual(t, kept, n)
	i := 0
	for e, err := range s.All() {
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("k%05d", i), string(e.Key))
		require.Equal(t, fmt.Sprintf("value %d", i), string(e.Value))
		i++
	}
	require.Equal(t, n, i)
	users, err := s.OpenColumnFamily("users")
	require.NoError(t, err)
	i = 0
	for e, err := range users.All() {
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("session %d", i), string(e.Value))
		i++
	}
	require.Equal(t, n, i)
	d, err := users.TTL([]byte("u00007"))
	require.NoError(t, err)
	require.Greater(t, d, 47*time.Hour)
	rep, err := s.CheckIntegrity(context.Background())
	require.NoError(t, err)
	require.Empty(t, rep.Problems)
}

// TestSealConversionsKilled moves a store around the cycle clear -> key A
// -> key B -> clear (encrypt in place, re-key, remove) in a child process
// killed with SIGKILL at random moments. After every kill the store opens
// with one of the secrets (finishing the conversion it was in), reads
// every value right and passes CheckIntegrity.
func TestSealConversionsKilled(t *testing.T) {
	rows, kills := 2000, 12
	if testing.Short() {
		rows, kills = 500, 4
	}
	path := filepath.Join(t.TempDir(), "seal.db")
	sealContent(t, path, rows)
	rng := rand.New(rand.NewPCG(19, uint64(time.Now().UnixNano())))
	seen := map[*kvstore.Encryption]int{}
	midJob := 0
	for i := range kills {
		child := testutil.StartChild(t, "TestSealChild", sealEnvPath+"="+path)
		child.WaitFor("started")
		time.Sleep(time.Duration(20+rng.IntN(60*(i+1))) * time.Millisecond)
		lines := child.Kill()
		steps := 0
		for _, l := range lines {
			if l == "step" {
				steps++
			}
		}
		job := pendingJob(t, path)
		if job != 0 {
			midJob++
		}
		s, enc, err := openAnySecret(path, 25)
		require.NoError(t, err, "kill %d", i)
		seen[enc]++
		checkSealContent(t, s, rows)
		// The open finished any conversion: the store is now encrypted or
		// in the clear, as it says (a re-key or a decryption the open
		// finished changed the secret that opens it).
		encrypted := s.Encrypted()
		require.NoError(t, s.Close())
		s, after, err := openAnySecret(path, 25)
		require.NoError(t, err)
		require.Equal(t, encrypted, after != nil)
		require.NoError(t, s.Close())
		require.Zero(t, pendingJob(t, path), "kill %d: the open left a conversion or its scrub undone", i)
		if encrypted {
			requireOnlyLiveHeader(t, path, i)
		}
		t.Logf("kill %d: %d steps done, conversion under way: %d, opened with %v", i, steps, job, map[*kvstore.Encryption]string{nil: "no secret", sealKeyA: "key A", sealKeyB: "key B"}[enc])
	}
	require.Positive(t, midJob, "no kill landed in the middle of a conversion (or of its scrub)")
}

// pendingJob reads, as another tool would, the job the store's encryption
// header records (docs/format.md: the byte after the version and the
// generation): 0 for none (or no header), 1 encrypting, 2 re-keying, 3
// decrypting; and 4 for none but a scrub still to run (the meta row
// 'encryption scrub').
func pendingJob(t *testing.T, path string) int {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?mode=ro")
	require.NoError(t, err)
	defer raw.Close()
	var job sql.NullInt64
	err = raw.QueryRow(`SELECT unicode(CAST(substr(value, 11, 1) AS TEXT)) FROM __snkv_meta WHERE name = 'encryption'`).Scan(&job)
	if errors.Is(err, sql.ErrNoRows) {
		return 0
	}
	require.NoError(t, err)
	if job.Int64 == 0 {
		var scrub int
		require.NoError(t, raw.QueryRow(`SELECT count(*) FROM __snkv_meta WHERE name = 'encryption scrub'`).Scan(&scrub))
		if scrub > 0 {
			return 4
		}
	}
	return int(job.Int64)
}

// requireOnlyLiveHeader checks that every copy of the encryption header's
// magic in the store's main file and WAL starts the live header: the scrub
// that ends an encryption or a re-key (which the open after a kill
// finishes) left no earlier header, so no wrapping of a data key under a
// secret a re-key retired.
func requireOnlyLiveHeader(t *testing.T, path string, kill int) {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?mode=ro")
	require.NoError(t, err)
	var live []byte
	require.NoError(t, raw.QueryRow(`SELECT value FROM __snkv_meta WHERE name = 'encryption'`).Scan(&live))
	require.NoError(t, raw.Close())
	for _, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for i := 0; ; {
			j := bytes.Index(b[i:], []byte("snkvseal"))
			if j < 0 {
				break
			}
			i += j
			require.True(t, bytes.HasPrefix(b[i:], live), "kill %d: an earlier encryption header is in %s at byte %d", kill, p, i)
			i += len(live)
		}
	}
}

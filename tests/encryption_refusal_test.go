package tests

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/snkv-go/snkv/internal/testutil"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

const refusalEnvPath = "SNKV_REFUSAL_CHILD_PATH"

// TestSealRefusalChild is the child process of TestRefusedOpensChangeNothing:
// it opens the store with the key SNKV_REFUSAL_CHILD_KEY names (none: in
// the clear), commits some values (they stay in the WAL), says "ready",
// and waits to be killed. Run directly, it does nothing.
func TestSealRefusalChild(t *testing.T) {
	testutil.ChildOnly(t)
	path := os.Getenv(refusalEnvPath)
	var enc *kvstore.Encryption
	if os.Getenv("SNKV_REFUSAL_CHILD_KEY") == "a" {
		enc = sealKeyA
	}
	s, err := kvstore.Open(path, kvstore.Options{Encryption: enc})
	require.NoError(t, err)
	for i := range 50 {
		require.NoError(t, s.Put(fmt.Appendf(nil, "late%02d", i), []byte("committed before the crash")))
	}
	fmt.Println("ready")
	select {}
}

// crashedStore makes a store (encrypted with key A, or in the clear) and
// leaves it as a process killed while it had it open leaves it: commits in
// its -wal, and its -shm.
func crashedStore(t *testing.T, encrypted bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "crashed.db")
	var enc *kvstore.Encryption
	key := ""
	if encrypted {
		enc, key = sealKeyA, "a"
	}
	s, err := kvstore.Open(path, kvstore.Options{Encryption: enc})
	require.NoError(t, err)
	require.NoError(t, s.Put([]byte("k"), []byte("v")))
	require.NoError(t, s.Close())

	child := testutil.StartChild(t, "TestSealRefusalChild", refusalEnvPath+"="+path, "SNKV_REFUSAL_CHILD_KEY="+key)
	child.WaitFor("ready")
	child.Kill()
	for _, c := range []string{"-wal", "-shm"} {
		st, err := os.Stat(path + c)
		require.NoError(t, err, "the crash left no %s", c)
		require.Positive(t, st.Size())
	}
	return path
}

// dirFiles returns every file of dir with its bytes.
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	m := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		m[e.Name()] = b
	}
	return m
}

// requireUnchanged checks that dir holds exactly the files of before, byte
// for byte.
func requireUnchanged(t *testing.T, dir string, before map[string][]byte, what string) {
	t.Helper()
	after := dirFiles(t, dir)
	for name := range after {
		_, ok := before[name]
		require.True(t, ok, "%s left a new file %s", what, name)
	}
	for name, b := range before {
		a, ok := after[name]
		require.True(t, ok, "%s removed %s", what, name)
		require.True(t, bytes.Equal(b, a), "%s changed %s", what, name)
	}
}

// Every refused open leaves every file of the store as it was, byte for
// byte, the -shm included, and makes no new one: a store closed cleanly, and
// one a crash left with commits in its -wal (where SQLite's WAL recovery
// would rewrite the -shm).
func TestRefusedOpensChangeNothing(t *testing.T) {
	wrong := &kvstore.Encryption{Key: bytes.Repeat([]byte{0x77}, 32)}
	type refusal struct {
		name string
		opts kvstore.Options
		want error
	}
	encryptedRefusals := []refusal{
		{"no secret", kvstore.Options{}, kvstore.ErrAuth},
		{"wrong key", kvstore.Options{Encryption: wrong}, kvstore.ErrAuth},
		{"read-only, no secret", kvstore.Options{ReadOnly: true}, kvstore.ErrAuth},
		{"read-only, wrong key", kvstore.Options{ReadOnly: true, Encryption: wrong}, kvstore.ErrAuth},
	}
	clearRefusals := []refusal{
		{"with a secret", kvstore.Options{Encryption: sealKeyA}, kvstore.ErrNotEncrypted},
		{"read-only with a secret", kvstore.Options{ReadOnly: true, Encryption: sealKeyA}, kvstore.ErrNotEncrypted},
		{"read-only, asked to encrypt", kvstore.Options{ReadOnly: true, Encryption: &kvstore.Encryption{Key: sealKeyA.Key, EncryptInPlace: true}}, kvstore.ErrReadOnly},
	}
	check := func(t *testing.T, path string, refusals []refusal) {
		dir := filepath.Dir(path)
		before := dirFiles(t, dir)
		for _, r := range refusals {
			_, err := kvstore.Open(path, r.opts)
			require.ErrorIs(t, err, r.want, r.name)
			requireUnchanged(t, dir, before, r.name)
		}
	}
	for _, encrypted := range []bool{true, false} {
		refusals := clearRefusals
		var enc *kvstore.Encryption
		if encrypted {
			refusals, enc = encryptedRefusals, sealKeyA
		}
		t.Run(fmt.Sprintf("closed, encrypted %v", encrypted), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "closed.db")
			s, err := kvstore.Open(path, kvstore.Options{Encryption: enc})
			require.NoError(t, err)
			require.NoError(t, s.Put([]byte("k"), []byte("v")))
			require.NoError(t, s.Close())
			check(t, path, refusals)
		})
		t.Run(fmt.Sprintf("crashed, encrypted %v", encrypted), func(t *testing.T) {
			path := crashedStore(t, encrypted)
			check(t, path, refusals)
			// And the store still opens, with every commit.
			s, err := kvstore.Open(path, kvstore.Options{Encryption: enc})
			require.NoError(t, err)
			v, err := s.Get([]byte("late49"))
			require.NoError(t, err)
			require.Equal(t, "committed before the crash", string(v))
			require.NoError(t, s.IntegrityCheck(context.Background()))
			require.NoError(t, s.Close())
		})
	}
}

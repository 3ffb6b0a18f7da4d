package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// encryptWith encrypts the store at path with the password of pwFile
// (with the cheap key derivation), which must succeed, and returns what
// the command did.
func encryptWith(t *testing.T, path, pwFile string) result {
	t.Helper()
	r := cli(t, nil, with([]string{"encrypt", path, "--password-file", pwFile}, cheapKDF...)...)
	require.Equal(t, 0, r.code, r.stderr)
	return r
}

// secretFile writes content to a new file of the test and returns its path.
func secretFile(t *testing.T, content string) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "secret-")
	require.NoError(t, err)
	_, err = f.WriteString(content)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return f.Name()
}

// storeBytes returns the bytes of the store file and of its -wal file.
func storeBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	if w, err := os.ReadFile(path + "-wal"); err == nil {
		b = append(append(b, "\x00WAL\x00"...), w...)
	}
	return b
}

// requireSealed checks that value is nowhere in the clear in the files
// of the store at path.
func requireSealed(t *testing.T, path, value string) {
	t.Helper()
	b := storeBytes(t, path)
	if i := bytes.Index(b, []byte(value)); i >= 0 {
		end := min(i+len(value)+8, len(b))
		t.Fatalf("%s holds a value in the clear at byte %d: %q", path, i, b[i:end])
	}
}

// requireNoLeak checks that no secret shows in what the command printed.
func requireNoLeak(t *testing.T, r result, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		require.NotContains(t, r.stdout, s, "a secret on stdout")
		require.NotContains(t, r.stderr, s, "a secret in a message")
	}
}

// with appends extra arguments to args.
func with(args []string, extra ...string) []string {
	return append(append([]string{}, args...), extra...)
}

// markedFixture is the fixture with the marker value, and its plaintext
// export.
func markedFixture(t *testing.T) (path, export string) {
	t.Helper()
	path = fixture(t)
	r := cli(t, nil, "put", path, "marked", marker)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, string(storeBytes(t, path)), marker)
	r = cli(t, nil, "export", path)
	require.Equal(t, 0, r.code, r.stderr)
	return path, r.stdout
}

// TestEncryptWithPasswordFile encrypts a store with a password read from
// the first line of a file, and checks what each command then does with
// no secret, the wrong one and the right one.
func TestEncryptWithPasswordFile(t *testing.T) {
	path, plain := markedFixture(t)
	const pw = "correct horse battery"
	pwFile := secretFile(t, pw+"\r\nthe second line is not part of it\n")

	r := encryptWith(t, path, pwFile)
	require.Equal(t, path+": encrypted with a password (Argon2id, 1 pass, 8 KiB, 1 thread)\n", r.stdout)
	requireNoLeak(t, r, pw)
	requireSealed(t, path, marker)

	// The same password from a file without a line ending.
	exact := secretFile(t, pw)
	r = cli(t, nil, "get", path, "marked", "--password-file", exact)
	require.Equal(t, result{marker, "", 0}, r)
	r = cli(t, nil, "stats", path, "--json", "--password-file", pwFile)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, true, jsonLines(t, r.stdout)[0]["encrypted"])
	r = cli(t, nil, "stats", path, "--password-file", pwFile)
	require.Regexp(t, `(?m)^encrypted +yes$`, r.stdout)

	// No secret, and stdin is not a terminal: exit code 5, saying how to
	// give one; the file is unchanged.
	before := storeBytes(t, path)
	for _, args := range [][]string{{"get", path, "marked"}, {"put", path, "k", "v"}, {"stats", path}} {
		r = cli(t, nil, args...)
		require.Equal(t, exitAuth, r.code, "%v: %s", args, r.stderr)
		require.Empty(t, r.stdout)
		require.Contains(t, r.stderr, path+": the store is encrypted: give its password (--password-file PATH, SNKV_PASSWORD")
		requireClean(t, r)
	}
	// The wrong password: exit code 5, nothing written, the password
	// shown nowhere.
	const wrong = "Tr0ub4dor&3-wrong"
	wrongFile := secretFile(t, wrong+"\n")
	for _, args := range [][]string{{"get", path, "marked"}, {"put", path, "k", "v"}, {"cf", "create", path, "new"}, {"decrypt", path}} {
		r = cli(t, nil, with(args, "--password-file", wrongFile)...)
		require.Equal(t, exitAuth, r.code, "%v: %s", args, r.stderr)
		require.Equal(t, "snkv: "+path+": the password does not open the store (wrong, or the store's encryption header was changed); the file is unchanged\n", r.stderr)
		requireNoLeak(t, r, wrong, pw)
	}
	require.Equal(t, before, storeBytes(t, path), "a refused open changed the file")

	// Export writes plaintext only when told to, and says so.
	r = cli(t, nil, "export", path, "--password-file", pwFile)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.Contains(t, r.stderr, "the store is encrypted, and an export writes its keys and values in the clear: pass --plaintext")
	r = cli(t, nil, "export", path, "--password-file", pwFile, "--plaintext")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, plain, r.stdout)
	require.Equal(t, "snkv: warning: "+path+" is encrypted, but its export is not: the output holds its keys and values in the clear\n", r.stderr)
	out := filepath.Join(t.TempDir(), "clear.jsonl")
	r = cli(t, nil, "export", path, "--password-file", pwFile, "--plaintext", "--out", out)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, out+" holds its keys and values in the clear")
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, plain, string(got))
	// --plaintext on a store without encryption changes nothing.
	plainStore := fixture(t)
	r = cli(t, nil, "export", plainStore, "--plaintext")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stderr)

	// A backup is as encrypted as the store.
	dest := filepath.Join(t.TempDir(), "backup.db")
	r = cli(t, nil, "backup", path, dest, "--password-file", pwFile)
	require.Equal(t, 0, r.code, r.stderr)
	requireSealed(t, dest, marker)
	r = cli(t, nil, "get", dest, "marked")
	require.Equal(t, exitAuth, r.code)
	r = cli(t, nil, "get", dest, "marked", "--password-file", pwFile)
	require.Equal(t, result{marker, "", 0}, r)
}

// TestEncryptAgain runs encrypt on an encrypted store: without its secret
// it says the store is encrypted already; with it, it does nothing else
// (that is how an interrupted encryption is finished); with another, exit
// code 5.
func TestEncryptAgain(t *testing.T) {
	path, _ := markedFixture(t)
	pwFile := secretFile(t, "first\n")
	r := encryptWith(t, path, pwFile)

	r = cli(t, nil, "encrypt", path)
	require.Equal(t, exitError, r.code)
	require.Contains(t, r.stderr, path+": the store is encrypted already ('snkv rekey' changes its password or key")
	r = cli(t, nil, "encrypt", path, "--password-file", pwFile)
	require.Equal(t, result{path + ": encrypted already; the password given opens it\n", "", 0}, r)
	r = cli(t, nil, "encrypt", path, "--password-file", secretFile(t, "second\n"))
	require.Equal(t, exitAuth, r.code)
	r = cli(t, nil, "encrypt", path, "--kdf", "time=0")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, `bad --kdf "time=0": time is the number of passes, 1 to 10`)
}

package main

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// cheapKDF keeps the tests fast: Argon2id at the smallest cost it takes
// (the default costs 64 MiB and about 0.2 s at every open).
var cheapKDF = []string{"--kdf", "time=1,memory=8KiB,threads=1"}

// marker is a value whose bytes must not be found in an encrypted file.
const marker = "MARKER-VALUE-in-the-clear-0123456789"

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

	r := cli(t, nil, with([]string{"encrypt", path, "--password-file", pwFile}, cheapKDF...)...)
	require.Equal(t, 0, r.code, r.stderr)
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

// TestSecretSources gives the secret each way: a raw key file, a hex key
// file, SNKV_KEY, SNKV_PASSWORD; and refuses what is ambiguous or unsafe
// without showing the secret.
func TestSecretSources(t *testing.T) {
	key := bytes.Repeat([]byte{0xA5, 0x0D, 0x3C, 0x7E}, 8)
	hexKey := hex.EncodeToString(key)
	rawFile := secretFile(t, string(key))
	hexFile := secretFile(t, hexKey+"\n")

	path, _ := markedFixture(t)
	r := cli(t, nil, "encrypt", path, "--key-file", rawFile)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, path+": encrypted with a raw key\n", r.stdout)
	for name, env := range map[string][]string{
		"raw key file": nil, "hex key file": nil, "SNKV_KEY": {keyEnv + "=" + hexKey},
	} {
		args := []string{"get", path, "marked"}
		switch name {
		case "raw key file":
			args = append(args, "--key-file", rawFile)
		case "hex key file":
			args = append(args, "--key-file", hexFile)
		}
		r = cliEnv(t, env, args...)
		require.Equal(t, result{marker, "", 0}, r, name)
	}
	// A key where the store has a password slot, and the other way round,
	// does not open it.
	r = cliEnv(t, []string{passwordEnv + "=" + hexKey}, "get", path, "marked")
	require.Equal(t, exitAuth, r.code, r.stderr)
	requireNoLeak(t, r, hexKey)

	pwPath, _ := markedFixture(t)
	r = cliEnv(t, []string{passwordEnv + "=env password"}, with([]string{"encrypt", pwPath}, cheapKDF...)...)
	require.Equal(t, 0, r.code, r.stderr)
	r = cliEnv(t, []string{passwordEnv + "=env password"}, "get", pwPath, "marked")
	require.Equal(t, result{marker, "", 0}, r)
	// A flag wins over the environment.
	r = cliEnv(t, []string{passwordEnv + "=not it"}, "get", pwPath, "marked", "--password-file", secretFile(t, "env password"))
	require.Equal(t, result{marker, "", 0}, r)

	// Ambiguous or malformed sources: usage errors that never show the
	// secret.
	bad := []struct {
		name string
		env  []string
		args []string
		msg  string
	}{
		{"two flags", nil, []string{"--password-file", hexFile, "--key-file", rawFile}, "--password-file and --key-file exclude each other"},
		{"two variables", []string{passwordEnv + "=x", keyEnv + "=" + hexKey}, nil, "SNKV_PASSWORD and SNKV_KEY are both set"},
		{"short key file", nil, []string{"--key-file", secretFile(t, hexKey[:40])}, "want a key of 32 raw bytes or 64 hex digits (the file holds 40 bytes)"},
		{"bad hex variable", []string{keyEnv + "=" + strings.Repeat("zq", 32)}, nil, "SNKV_KEY: want a key of 32 raw bytes or 64 hex digits (a character is not a hex digit)"},
		{"empty first line", nil, []string{"--password-file", secretFile(t, "\nsecond")}, "the first line is empty"},
		{"password as a flag", nil, []string{"--password", "hunter2-zq"}, "--password is refused: a secret given on the command line is visible"},
		{"password as a flag with =", nil, []string{"--password=hunter2-zq"}, "--password is refused"},
		{"key as a flag", nil, []string{"--key", hexKey}, "--key is refused"},
		{"prompt without a terminal", nil, []string{"--password-prompt"}, "--password-prompt needs a terminal on stdin"},
		{"a value for the prompt flag", nil, []string{"--password-prompt=hunter2-zq"}, "--password-prompt and --new-password-prompt take no value"},
		{"an unknown short flag", nil, []string{"-phunter2-zq"}, "unknown shorthand flag: 'p'\n"},
		{"bad flag syntax", nil, []string{"---hunter2-zq"}, "bad flag syntax: a flag is --NAME"},
	}
	for _, b := range bad {
		r = cliEnv(t, b.env, with([]string{"get", path, "marked"}, b.args...)...)
		require.Equal(t, exitUsage, r.code, "%s: %s", b.name, r.stderr)
		require.Contains(t, r.stderr, b.msg, b.name)
		requireNoLeak(t, r, hexKey, hexKey[:40], "hunter2-zq", "zqzq")
		requireClean(t, r)
	}
	missing := filepath.Join(t.TempDir(), "none")
	r = cli(t, nil, "get", path, "marked", "--key-file", missing)
	require.Equal(t, exitError, r.code, r.stderr)
	require.Contains(t, r.stderr, "--key-file: open "+missing+": no such file or directory")

	// A store without encryption: a secret flag is refused (it does not
	// apply), a secret in the environment is ignored; --create with a
	// secret flag does not make a plaintext store either.
	plainPath := fixture(t)
	r = cli(t, nil, "get", plainPath, "user:1", "--password-file", hexFile)
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, plainPath+": the store is not encrypted, and --password-file applies only to encrypted stores ('snkv encrypt "+plainPath+"' encrypts it)")
	r = cliEnv(t, []string{passwordEnv + "=x"}, "get", plainPath, "user:1")
	require.Equal(t, result{"alice", "", 0}, r)
	newPath := filepath.Join(t.TempDir(), "new.db")
	r = cli(t, nil, "put", newPath, "k", "v", "--create", "--key-file", rawFile)
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "a new store is created without encryption")
	require.NoFileExists(t, newPath)
	// encrypt --create makes a new encrypted store.
	r = cli(t, nil, "encrypt", newPath, "--create", "--key-file", rawFile, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, map[string]any{"file": newPath, "encrypted": true, "secret": "key"}, jsonLines(t, r.stdout)[0])
	r = cli(t, nil, "put", newPath, "k", "v")
	require.Equal(t, exitAuth, r.code)
}

// TestRekeyDecryptRoundTrip encrypts with a key, re-keys to a password and
// back to a key, then decrypts: the data is the same at every step, and
// only the current secret opens the store.
func TestRekeyDecryptRoundTrip(t *testing.T) {
	path, plain := markedFixture(t)
	keyFile := secretFile(t, strings.Repeat("k", 32))
	r := cli(t, nil, "encrypt", path, "--key-file", keyFile)
	require.Equal(t, 0, r.code, r.stderr)

	exported := func(secret ...string) string {
		t.Helper()
		r := cli(t, nil, with([]string{"export", path, "--plaintext"}, secret...)...)
		require.Equal(t, 0, r.code, r.stderr)
		return r.stdout
	}
	require.Equal(t, plain, exported("--key-file", keyFile))

	// Key -> password, from a file.
	pwFile := secretFile(t, "the new password\n")
	r = cli(t, nil, with([]string{"rekey", path, "--key-file", keyFile, "--new-password-file", pwFile}, cheapKDF...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, path+": re-keyed with a password (Argon2id, 1 pass, 8 KiB, 1 thread); every value is sealed again, and only the new password opens the store\n", r.stdout)
	r = cli(t, nil, "get", path, "marked", "--key-file", keyFile)
	require.Equal(t, exitAuth, r.code, "the old key still opens the store")
	require.Equal(t, plain, exported("--password-file", pwFile))
	requireSealed(t, path, marker)

	// Password -> key, both from the environment; --kdf does not apply to
	// a key.
	newKey := strings.Repeat("5c", 32)
	env := []string{passwordEnv + "=the new password", newKeyEnv + "=" + newKey}
	r = cliEnv(t, env, "rekey", path, "--kdf", "light")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "--kdf applies to a password, not to a raw key")
	r = cliEnv(t, env, "rekey", path, "--json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, map[string]any{"file": path, "encrypted": true, "rekeyed": true, "secret": "key"}, jsonLines(t, r.stdout)[0])
	requireNoLeak(t, r, newKey, "the new password")
	r = cli(t, nil, "get", path, "marked", "--password-file", pwFile)
	require.Equal(t, exitAuth, r.code)
	r = cliEnv(t, []string{keyEnv + "=" + newKey}, "get", path, "marked")
	require.Equal(t, result{marker, "", 0}, r)

	// rekey without a new secret, off a terminal: a usage error.
	r = cliEnv(t, []string{keyEnv + "=" + newKey}, "rekey", path)
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "rekey needs the new password or key")

	// Decrypt: the store opens without a secret and holds the same data.
	r = cliEnv(t, []string{keyEnv + "=" + newKey}, "decrypt", path)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, path+": decrypted: every value is stored in the clear, and the store opens without a password or key\n", r.stdout)
	require.Equal(t, plain, exported())
	r = cli(t, nil, "stats", path, "--json")
	require.Equal(t, false, jsonLines(t, r.stdout)[0]["encrypted"])

	// Nothing to re-key or decrypt now.
	for _, cmd := range []string{"rekey", "decrypt"} {
		r = cliEnv(t, []string{keyEnv + "=" + newKey}, cmd, path)
		require.Equal(t, exitError, r.code, r.stderr)
		require.Contains(t, r.stderr, path+": the store is not encrypted: nothing to ")
	}
}

// TestEncryptAgain runs encrypt on an encrypted store: without its secret
// it says the store is encrypted already; with it, it does nothing else
// (that is how an interrupted encryption is finished); with another, exit
// code 5.
func TestEncryptAgain(t *testing.T) {
	path, _ := markedFixture(t)
	pwFile := secretFile(t, "first\n")
	r := cli(t, nil, with([]string{"encrypt", path, "--password-file", pwFile}, cheapKDF...)...)
	require.Equal(t, 0, r.code, r.stderr)

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

// TestEncryptedStoreCommands runs the other commands on an encrypted store
// with its password in the environment: each works as on a plain store,
// and what they write is sealed.
func TestEncryptedStoreCommands(t *testing.T) {
	path := fixture(t)
	env := []string{passwordEnv + "=pw"}
	run := func(in string, args ...string) result {
		t.Helper()
		cmd := snkvCmd(t0, args...)
		cmd.Env = append(cmd.Env, env...)
		return runCmd(t, cmd, strings.NewReader(in))
	}
	ok := func(in string, args ...string) string {
		t.Helper()
		r := run(in, args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		return r.stdout
	}
	ok("", with([]string{"encrypt", path}, cheapKDF...)...)

	ok("", "put", path, "new", marker)
	require.Equal(t, marker, ok("", "get", path, "new"))
	require.Contains(t, ok("", "get", path, "user:1", "user:2"), "bob")
	require.Equal(t, "true\n", ok("", "exists", path, "new"))
	require.Contains(t, ok("", "scan", path, "--prefix", "user:"), "carol")
	require.Equal(t, "3\n", ok("", "count", path, "--prefix", "user:"))
	require.Contains(t, ok("", "ls", path), "sessions")
	require.Equal(t, "30m\n", ok("", "ttl", path, "--cf", "sessions", "tok-a"))
	ok("", "expire", path, "--cf", "sessions", "perm", "1h")
	ok("", "persist", path, "--cf", "sessions", "perm")
	ok("", "del", path, "user:3")
	ok("", "cf", "create", path, "more")
	require.Contains(t, ok("", "cf", "list", path), "more")
	ok(`{"cf":"more","key":"imported","value":"`+marker+`-2"}`+"\n", "import", path)
	require.Equal(t, marker+"-2", ok("", "get", path, "--cf", "more", "imported"))
	ok("", "cf", "clear", path, "more")
	ok("", "cf", "drop", path, "more")
	ok("", "purge", path)
	require.Contains(t, ok("", "check", path), "ok:")
	ok("", "repair", path)
	ok("", "checkpoint", path, "--mode", "truncate")
	ok("", "vacuum", path)
	ok("", "upgrade", path)
	requireSealed(t, path, marker)
	// The time-series commands work too, and their values are sealed.
	ok("", "timelog", "append", path, "ev", "--create", "--values", "1", marker+"-3")
	require.Contains(t, ok("", "timelog", "range", path, "ev"), marker+"-3")
	ok("", "checkpoint", path, "--mode", "truncate")
	requireSealed(t, path, marker+"-3")
	require.Contains(t, ok("", "timelog", "ls", path), "ev")
	require.Contains(t, ok("", "timelog", "stats", path, "ev"), "ev")
	ok("", "timelog", "compact", path, "ev")

	// Shell completion of --cf uses the secret of the environment.
	require.Contains(t, ok("", "__complete", "get", path, "--cf", ""), "sessions")

	// repair needs no secret: given none, it runs without unlocking.
	r := cli(t, nil, "repair", path)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "nothing to repair\n", r.stdout)
	damage(t, path, `DROP VIEW "__snkv_view__default"`)
	r = cli(t, nil, "repair", path)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "read view recreated")
	require.Contains(t, ok("", "get", path, "user:1"), "alice")
}

// TestTamperedSealedValue copies a sealed value onto another key, as
// another tool could: reading it is an authentication failure of a store
// that opened, so the store is damaged (exit code 4, not 5), and check
// names the key.
func TestTamperedSealedValue(t *testing.T) {
	path := fixture(t)
	keyFile := secretFile(t, strings.Repeat("k", 32))
	r := cli(t, nil, "encrypt", path, "--key-file", keyFile)
	require.Equal(t, 0, r.code, r.stderr)
	damage(t, path, `UPDATE "default" SET value = (SELECT value FROM "default" WHERE key = CAST('user:2' AS BLOB)), crc = 4294967296 WHERE key = CAST('user:1' AS BLOB)`)

	r = cli(t, nil, "get", path, "user:1", "--key-file", keyFile)
	requireDamaged(t, r, path)
	require.Contains(t, r.stderr, "authentication failed: key 757365723a31")
	r = cli(t, nil, "check", path, "--key-file", keyFile)
	requireDamaged(t, r, path)
	require.Contains(t, r.stderr, "key 757365723a31")
	r = cli(t, nil, "get", path, "user:2", "--key-file", keyFile)
	require.Equal(t, result{"bob", "", 0}, r)
}

// TestRekeyAroundABadRow re-keys a store holding a row the shell inserted
// in the clear (reading it is an authentication failure): the re-key
// finishes around it, says so and names it (exit code 4, a damaged store,
// never 5, a wrong secret), and every command then works with the new
// secret.
func TestRekeyAroundABadRow(t *testing.T) {
	path := fixture(t)
	oldPw, newPw := secretFile(t, "0ld-s3cret\n"), secretFile(t, "n3w-s3cret\n")
	r := cli(t, nil, with([]string{"encrypt", path, "--password-file", oldPw}, cheapKDF...)...)
	require.Equal(t, 0, r.code, r.stderr)
	damage(t, path, `INSERT INTO "default" (key, value) VALUES (CAST('shell' AS BLOB), CAST('typed in the shell' AS BLOB))`)

	r = cli(t, nil, with([]string{"rekey", path, "--password-file", oldPw, "--new-password-file", newPw}, cheapKDF...)...)
	require.Equal(t, exitDamaged, r.code, r.stderr)
	require.Equal(t, path+": re-keyed with a password (Argon2id, 1 pass, 8 KiB, 1 thread); every value is sealed again, and only the new password opens the store\n", r.stdout)
	require.Contains(t, r.stderr, "1 row could not be read and was left as it was")
	require.Contains(t, r.stderr, "key 7368656c6c")
	requireNoLeak(t, r, "0ld-s3cret", "n3w-s3cret")

	r = cli(t, nil, "get", path, "user:2", "--password-file", oldPw)
	require.Equal(t, exitAuth, r.code, "the old password is retired")
	r = cli(t, nil, "del", path, "user:2", "--password-file", newPw)
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "get", path, "user:1", "--password-file", newPw)
	require.Equal(t, result{"alice", "", 0}, r)
}

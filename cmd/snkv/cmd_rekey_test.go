package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

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
	require.Contains(t, r.stderr, `key "shell"`)
	requireNoLeak(t, r, "0ld-s3cret", "n3w-s3cret")

	r = cli(t, nil, "get", path, "user:2", "--password-file", oldPw)
	require.Equal(t, exitAuth, r.code, "the old password is retired")
	r = cli(t, nil, "del", path, "user:2", "--password-file", newPw)
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "get", path, "user:1", "--password-file", newPw)
	require.Equal(t, result{"alice", "", 0}, r)
}

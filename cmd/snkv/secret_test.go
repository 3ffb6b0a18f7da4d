package main

import (
	"bytes"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

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

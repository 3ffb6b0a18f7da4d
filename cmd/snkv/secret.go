package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// The environment variables that give an encrypted store's secret: the
// password as it is, or the raw key as 64 hex digits. The NEW ones give
// the secret 'rekey' sets.
const (
	passwordEnv    = "SNKV_PASSWORD"
	keyEnv         = "SNKV_KEY"
	newPasswordEnv = "SNKV_NEW_PASSWORD"
	newKeyEnv      = "SNKV_NEW_KEY"
)

// maxSecretFile bounds what a password or key file may hold: a file
// larger than this is not a password file.
const maxSecretFile = 64 << 10

// secretFlags says where one secret (the store's, or the new one of
// rekey) comes from: the flags given and the names of the flags and
// environment variables, for messages.
type secretFlags struct {
	passwordFile, keyFile string
	prompt                bool

	passwordFlag, keyFlag, promptFlag string // without "--"
	passwordEnv, keyEnv               string
}

// given returns the name (with "--") of the one secret flag given, "" when
// none is; several are a usage error.
func (f *secretFlags) given() (string, error) {
	var names []string
	if f.passwordFile != "" {
		names = append(names, "--"+f.passwordFlag)
	}
	if f.keyFile != "" {
		names = append(names, "--"+f.keyFlag)
	}
	if f.prompt {
		names = append(names, "--"+f.promptFlag)
	}
	switch len(names) {
	case 0:
		return "", nil
	case 1:
		return names[0], nil
	}
	return "", usagef("%s exclude each other: give the secret one way", strings.Join(names, " and "))
}

// fromEnv reports whether the environment gives the secret.
func (f *secretFlags) fromEnv() bool {
	return os.Getenv(f.passwordEnv) != "" || os.Getenv(f.keyEnv) != ""
}

// secret is a password or a raw key, read for one open or conversion and
// wiped once used. Its bytes never enter a message.
type secret struct {
	password, key []byte
}

// wipe overwrites the secret's bytes.
func (s *secret) wipe() {
	if s != nil {
		clear(s.password)
		clear(s.key)
	}
}

// kind is "password" or "key".
func (s *secret) kind() string {
	if s.key != nil {
		return "key"
	}
	return "password"
}

// encryption is the library's form of the secret, with cost kdf for a
// password that is set now (a zero kdf: the default).
func (s *secret) encryption(kdf kvstore.KDF) *kvstore.Encryption {
	return &kvstore.Encryption{Password: s.password, Key: s.key, KDF: kdf}
}

// readSecret reads the secret f names: from its flag, else from the
// environment, else from a prompt when stdin is a terminal. A new
// secret's password is asked twice. ok is false when there is no source:
// no flag, no variable, and stdin is not a terminal.
func (a *app) readSecret(f *secretFlags, path string, isNew bool) (s *secret, ok bool, err error) {
	flag, err := f.given()
	if err != nil {
		return nil, false, err
	}
	switch {
	case f.passwordFile != "":
		pw, err := readPasswordFile(flag, f.passwordFile)
		return &secret{password: pw}, true, err
	case f.keyFile != "":
		key, err := readKeyFile(flag, f.keyFile)
		return &secret{key: key}, true, err
	case f.prompt:
		if !a.stdinIsTerminal() {
			return nil, false, usagef("%s needs a terminal on stdin", flag)
		}
	default:
		pw, key := os.Getenv(f.passwordEnv), os.Getenv(f.keyEnv)
		switch {
		case pw != "" && key != "":
			return nil, false, usagef("%s and %s are both set: give the secret one way", f.passwordEnv, f.keyEnv)
		case key != "":
			k, err := decodeHexKey([]byte(strings.TrimSpace(key)))
			if err != nil {
				return nil, false, usagef("%s: %s", f.keyEnv, err)
			}
			return &secret{key: k}, true, nil
		case pw != "":
			return &secret{password: []byte(pw)}, true, nil
		case !a.stdinIsTerminal():
			return nil, false, nil
		}
	}
	if !isNew {
		pw, err := a.askPassword(fmt.Sprintf("Password for %s: ", path))
		return &secret{password: pw}, err == nil, err
	}
	pw, err := a.askPassword(fmt.Sprintf("New password for %s: ", path))
	if err != nil {
		return nil, false, err
	}
	again, err := a.askPassword("Repeat the new password: ")
	defer clear(again)
	if err != nil {
		clear(pw)
		return nil, false, err
	}
	if !bytes.Equal(pw, again) {
		clear(pw)
		return nil, false, fmt.Errorf("the two passwords differ: nothing was changed")
	}
	return &secret{password: pw}, true, nil
}

// stdinIsTerminal reports whether the command's stdin is a terminal.
func (a *app) stdinIsTerminal() bool {
	f, ok := a.in.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// askPassword shows prompt on stderr and reads a password from the
// terminal on stdin, without echo. Ctrl-C gives the terminal back as it
// was and ends the command.
func (a *app) askPassword(prompt string) ([]byte, error) {
	fd := int(a.in.(*os.File).Fd())
	state, err := term.GetState(fd)
	if err != nil {
		return nil, fmt.Errorf("reading the password: %w", err)
	}
	fmt.Fprint(a.err, prompt)
	type answer struct {
		pw  []byte
		err error
	}
	got := make(chan answer, 1)
	go func() {
		pw, err := term.ReadPassword(fd)
		got <- answer{pw, err}
	}()
	select {
	case r := <-got:
		fmt.Fprintln(a.err)
		switch {
		case r.err != nil:
			return nil, fmt.Errorf("reading the password: %w", r.err)
		case len(r.pw) == 0:
			return nil, usagef("empty password")
		}
		return r.pw, nil
	case <-a.ctx.Done():
		_ = term.Restore(fd, state)
		fmt.Fprintln(a.err)
		return nil, interruptedf("interrupted: no password was given")
	}
}

// readPasswordFile returns the first line of the file at path, without
// its line ending ("\n" or "\r\n").
func readPasswordFile(flag, path string) ([]byte, error) {
	b, err := readSecretFile(flag, path)
	if err != nil {
		return nil, err
	}
	defer clear(b)
	line, _, _ := bytes.Cut(b, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(line) == 0 {
		return nil, usagef("%s %s: the first line is empty: no password", flag, path)
	}
	return bytes.Clone(line), nil
}

// readKeyFile returns the key in the file at path: 32 raw bytes, or 64 hex
// digits (white space around them is ignored).
func readKeyFile(flag, path string) ([]byte, error) {
	b, err := readSecretFile(flag, path)
	if err != nil {
		return nil, err
	}
	defer clear(b)
	if len(b) == 32 {
		return bytes.Clone(b), nil
	}
	key, err := decodeHexKey(bytes.TrimSpace(b))
	if err != nil {
		return nil, usagef("%s %s: %s (the file holds %d bytes)", flag, path, err, len(b))
	}
	return key, nil
}

// readSecretFile reads the file at path, up to maxSecretFile bytes.
func readSecretFile(flag, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	switch {
	case err != nil:
		clear(b)
		return nil, fmt.Errorf("%s: %w", flag, err)
	case len(b) > maxSecretFile:
		clear(b)
		return nil, usagef("%s %s: larger than %d KiB: not a password or key file", flag, path, maxSecretFile>>10)
	}
	return b, nil
}

// decodeHexKey decodes a key of 64 hex digits. Its message never shows
// the digits (encoding/hex's would show the first bad one).
func decodeHexKey(h []byte) ([]byte, error) {
	if len(h) != 64 {
		return nil, fmt.Errorf("want a key of 32 raw bytes or 64 hex digits")
	}
	key := make([]byte, 32)
	if _, err := hex.Decode(key, h); err != nil {
		clear(key)
		return nil, fmt.Errorf("want a key of 32 raw bytes or 64 hex digits (a character is not a hex digit)")
	}
	return key, nil
}

// parseKDF reads --kdf: "default", "light", or the cost as
// "time=N,memory=SIZE,threads=N" (SIZE in KiB, or with a KiB, MiB or GiB
// suffix; a part left out keeps the default's value).
func parseKDF(s string) (kvstore.KDF, error) {
	switch strings.ToLower(s) {
	case "", "default":
		return kvstore.DefaultKDF, nil
	case "light":
		return kvstore.LightKDF, nil
	}
	k := kvstore.DefaultKDF
	bad := func(why string) (kvstore.KDF, error) {
		return k, usagef("bad --kdf %q: %s (want default, light, or time=N,memory=SIZE,threads=N such as time=3,memory=64MiB,threads=1)", s, why)
	}
	for _, part := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return bad(fmt.Sprintf("%q is not NAME=VALUE", part))
		}
		switch name {
		case "time":
			n, err := strconv.ParseUint(val, 10, 32)
			if err != nil || n < 1 || n > uint64(kvstore.KDFOpenLimit.Time) {
				return bad(fmt.Sprintf("time is the number of passes, 1 to %d", kvstore.KDFOpenLimit.Time))
			}
			k.Time = uint32(n)
		case "threads":
			n, err := strconv.ParseUint(val, 10, 8)
			if err != nil || n < 1 || n > uint64(kvstore.KDFOpenLimit.Threads) {
				return bad(fmt.Sprintf("threads is 1 to %d", kvstore.KDFOpenLimit.Threads))
			}
			k.Threads = uint8(n)
		case "memory":
			kib, err := parseKiB(val)
			if err != nil || kib > kvstore.KDFOpenLimit.MemoryKiB {
				return bad(fmt.Sprintf("memory is a size such as 65536, 64MiB or 8KiB, at most %dMiB", kvstore.KDFOpenLimit.MemoryKiB>>10))
			}
			k.MemoryKiB = kib
		default:
			return bad(fmt.Sprintf("unknown part %q", name))
		}
	}
	if k.MemoryKiB < 8*uint32(k.Threads) {
		return bad(fmt.Sprintf("memory must be at least 8 KiB per thread (%d KiB)", 8*uint32(k.Threads)))
	}
	return k, nil
}

// parseKiB reads a size in KiB: a number, or one with a KiB, MiB or GiB
// suffix; at most 4 GiB.
func parseKiB(s string) (uint32, error) {
	mult := uint64(1)
	for _, u := range []struct {
		suffix string
		kib    uint64
	}{{"KiB", 1}, {"MiB", 1 << 10}, {"GiB", 1 << 20}} {
		if t, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = t, u.kib
			break
		}
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 0 || n*mult > 4<<20 {
		return 0, fmt.Errorf("bad size")
	}
	return uint32(n * mult), nil
}

// describeKDF shows a password's cost: "Argon2id, 3 passes, 64 MiB, 1
// thread".
func describeKDF(k kvstore.KDF) string {
	mem := fmt.Sprintf("%d KiB", k.MemoryKiB)
	if k.MemoryKiB%1024 == 0 {
		mem = fmt.Sprintf("%d MiB", k.MemoryKiB/1024)
	}
	return fmt.Sprintf("Argon2id, %d %s, %s, %d %s", k.Time, plural(int(k.Time), "pass", "passes"), mem, k.Threads, plural(int(k.Threads), "thread", "threads"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// kdfJSON is a password's cost in --json output.
func kdfJSON(k kvstore.KDF) map[string]any {
	return map[string]any{"algorithm": "argon2id", "time": k.Time, "memory_kib": k.MemoryKiB, "threads": k.Threads}
}

// refusedSecretFlags are flags that would put a secret on the command
// line, where other users see it (ps) and the shell's history keeps it.
// They are registered hidden so that their use is refused with a message
// that never repeats the value.
var refusedSecretFlags = []string{"password", "key", "new-password", "new-key"}

// addSecretFlags registers the global flags that give the store's secret,
// and the refused ones.
func (a *app) addSecretFlags(root *cobra.Command) {
	pf := root.PersistentFlags()
	a.secret = secretFlags{
		passwordFlag: "password-file", keyFlag: "key-file", promptFlag: "password-prompt",
		passwordEnv: passwordEnv, keyEnv: keyEnv,
	}
	pf.StringVar(&a.secret.passwordFile, "password-file", "", "read the password of an encrypted store from the first line of `PATH`")
	pf.StringVar(&a.secret.keyFile, "key-file", "", "read the key of an encrypted store from `PATH` (32 raw bytes or 64 hex digits)")
	pf.BoolVar(&a.secret.prompt, "password-prompt", false, "ask for the password of an encrypted store on the terminal (the default on a terminal when no other source is given)")
	for _, name := range refusedSecretFlags {
		pf.String(name, "", "refused: a secret on the command line is visible to others")
		_ = pf.MarkHidden(name)
	}
}

// checkRefusedSecretFlags refuses a secret given as a flag's value,
// without repeating it.
func checkRefusedSecretFlags(cmd *cobra.Command) error {
	for _, name := range refusedSecretFlags {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			what := "--" + strings.TrimSuffix(name, "-") + "-file PATH"
			return usagef("--%s is refused: a secret given on the command line is visible to other users (ps) and kept in the shell's history; use %s, an environment variable (%s, %s) or the terminal prompt", name, what, passwordEnv, keyEnv)
		}
	}
	return nil
}

// redactFlagError drops from a command-line parsing error the text a
// mistyped secret could be in: the letters after an unknown short flag
// ("-phunter2"), a malformed flag, a value given to --password-prompt.
func redactFlagError(err error) error {
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "unknown shorthand flag: "):
		if head, _, ok := strings.Cut(msg, " in -"); ok {
			return fmt.Errorf("%s", head)
		}
	case strings.HasPrefix(msg, "bad flag syntax: "):
		return fmt.Errorf("bad flag syntax: a flag is --NAME, --NAME=VALUE or -X")
	case strings.HasPrefix(msg, "invalid argument ") && strings.Contains(msg, "password-prompt\" flag"):
		return fmt.Errorf("--password-prompt and --new-password-prompt take no value (a password on the command line is refused)")
	}
	return err
}

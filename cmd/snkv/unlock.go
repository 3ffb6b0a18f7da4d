package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/snkv-go/snkv/kvstore"
)

// authError is an encrypted store that could not be opened: no password or
// key was given, or not the right one (exit code 5).
type authError struct{ err error }

func (e authError) Error() string { return e.err.Error() }
func (e authError) Unwrap() error { return e.err }

// openUnlocked opens the store at path with opts, with its secret when it
// is encrypted.
//
// It opens without a secret first: a store without encryption opened with
// one would be encrypted in place, which only 'snkv encrypt' may do. An
// encrypted store refuses that open (ErrAuth, nothing written); its secret
// is read then (a.secret: flag, environment, or prompt) and the store
// opened with it. A secret flag given for a store without encryption is
// refused rather than ignored; a secret in the environment is ignored.
func (a *app) openUnlocked(path string, opts kvstore.Options, write bool) (*kvstore.Store, error) {
	db, err := kvstore.Open(path, opts)
	if err == nil {
		return db, a.plainStore(db, path)
	}
	if !errors.Is(err, kvstore.ErrAuth) {
		return nil, a.explainOpen(path, write, err)
	}
	if a.onEncrypted != nil {
		if err := a.onEncrypted(); err != nil {
			return nil, err
		}
	}
	s, ok, err := a.readSecret(&a.secret, path, false)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, authError{fmt.Errorf("%s: the store is encrypted: give its password (--password-file PATH, %s, or the prompt shown when stdin is a terminal) or its key (--key-file PATH, %s)", path, passwordEnv, keyEnv)}
	}
	opts.Encryption = s.encryption(kvstore.KDF{})
	db, err = kvstore.Open(path, opts)
	s.wipe()
	switch {
	case errors.Is(err, kvstore.ErrAuth):
		return nil, authError{fmt.Errorf("%s: the %s does not open the store (wrong, or the store's encryption header was changed); the file is unchanged", path, s.kind())}
	case err != nil:
		return nil, a.explainOpen(path, write, err)
	}
	a.unlocked = true
	return db, nil
}

// plainStore checks a secret flag against db, a store opened without a
// secret (so not encrypted): only a command that encrypts takes one then.
func (a *app) plainStore(db *kvstore.Store, path string) error {
	if a.encrypting {
		return nil
	}
	var err error
	if a.needEncrypted != "" {
		err = fmt.Errorf("%s: the store is not encrypted: nothing to %s ('snkv encrypt %s' encrypts it)", path, a.needEncrypted, path)
	} else if flag, ferr := a.secret.given(); ferr != nil {
		err = ferr
	} else if flag != "" {
		err = usagef("%s: the store is not encrypted, and %s applies only to encrypted stores ('snkv encrypt %s' encrypts it)", path, flag, path)
	}
	if err != nil {
		_ = db.Close()
	}
	return err
}

// openForCompletion opens the store at path read-only for shell
// completion: with the secret of the environment when it is encrypted,
// never with a prompt.
func openForCompletion(path string) (*kvstore.Store, error) {
	opts := kvstore.Options{ReadOnly: true}
	db, err := kvstore.Open(path, opts)
	if !errors.Is(err, kvstore.ErrAuth) {
		return db, err
	}
	var s secret
	if h := os.Getenv(keyEnv); h != "" {
		if s.key, err = decodeHexKey([]byte(strings.TrimSpace(h))); err != nil {
			return nil, err
		}
	} else if pw := os.Getenv(passwordEnv); pw != "" {
		s.password = []byte(pw)
	} else {
		return nil, err
	}
	opts.Encryption = s.encryption(kvstore.KDF{})
	defer s.wipe()
	return kvstore.Open(path, opts)
}

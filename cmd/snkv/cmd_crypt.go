package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

// The commands that encrypt a store, change its password or key, and
// remove its encryption (kvstore's Encrypt, Rekey and RemoveEncryption).

// kdfUsage is the help of --kdf.
const kdfUsage = "`COST` of deriving a key from the new password: default (Argon2id, 64 MiB, 3 passes), light (9 MiB, 4 passes) or time=N,memory=SIZE,threads=N"

// finished reports whether err is that of a conversion that finished all
// the same: it left rows it could not read as they were (reported with
// exit code 4, a damaged store), or other programs' readers kept its
// scrub from clearing the old form from the file. The command says what
// it did, then reports err (see scrubAdvice).
func finished(err error) bool {
	var bad *kvstore.BadRowsError
	return errors.As(err, &bad) || errors.Is(err, kvstore.ErrScrubPending)
}

// scrubAdvice rewords, for the command line, the error of a conversion
// whose scrub other programs' readers held up; again says what clears it
// once they have closed the store.
func scrubAdvice(err error, path, again string) error {
	if !errors.Is(err, kvstore.ErrScrubPending) {
		return err
	}
	return fmt.Errorf("%s: the old form of the values (and of its encryption header) is still in the file: another program reading the store kept it from being cleared; once it has closed the store, %s clears it", path, again)
}

// sealCost reads --kdf and refuses it for a raw key.
func sealCost(cmd *cobra.Command, kdfFlag string, s *secret) (kvstore.KDF, error) {
	kdf, err := parseKDF(kdfFlag)
	if err != nil {
		return kdf, err
	}
	if s.key != nil && cmd.Flags().Changed("kdf") {
		return kdf, usagef("--kdf applies to a password, not to a raw key")
	}
	return kdf, nil
}

// sealResult prints what an encrypt or rekey (did) set: the kind of
// secret and, for a password, its cost; then after.
func (a *app) sealResult(path, did, after string, s *secret, kdf kvstore.KDF, extra map[string]any) error {
	if a.json {
		r := map[string]any{"file": path, "encrypted": true, "secret": s.kind()}
		if s.key == nil {
			r["kdf"] = kdfJSON(kdf)
		}
		for k, v := range extra {
			r[k] = v
		}
		return a.emit(r)
	}
	how := "a raw key"
	if s.key == nil {
		how = "a password (" + describeKDF(kdf) + ")"
	}
	_, err := fmt.Fprintf(a.out, "%s: %s with %s%s\n", path, did, how, after)
	return err
}

// conversion is what encrypt and rekey say and run around the library call
// that sets a new secret.
type conversion struct {
	needs   string                 // the usage error when no new secret is given
	doing   string                 // the progress bar's label
	stopped func(s *secret) string // what an interrupted conversion leaves
	run     func(context.Context, kvstore.Encryption) error
}

// convert reads the new secret from f and its cost from --kdf, and runs
// cv.run with it under a progress bar. It returns the secret (wipe it, even
// on error) and the cost, for the result line.
func (a *app) convert(cmd *cobra.Command, path string, f *secretFlags, kdfFlag string, cv conversion) (*secret, kvstore.KDF, error) {
	s, ok, err := a.readSecret(f, path, true)
	if err != nil {
		return s, kvstore.KDF{}, err
	}
	if !ok {
		return s, kvstore.KDF{}, usagef("%s: %s", path, cv.needs)
	}
	kdf, err := sealCost(cmd, kdfFlag, s)
	if err != nil {
		return s, kdf, err
	}
	bar := a.progress(-1, cv.doing, "")
	err = cv.run(cmd.Context(), *s.encryption(kdf))
	bar.done()
	if interrupted(cmd.Context(), err) {
		return s, kdf, interruptedf("interrupted: %s", cv.stopped(s))
	}
	return s, kdf, err
}

func (a *app) encryptCommand() *cobra.Command {
	var kdfFlag string
	c := &cobra.Command{
		Use:   "encrypt FILE",
		Short: "Encrypt a store in place with a password or a raw key",
		Long: `Encrypt the store: every value of every column family, and the values of
its time-series logs, is sealed in place (XChaCha20-Poly1305), in small
transactions; programs may go on using the store meanwhile. Keys, TTLs,
timestamps and the catalog stay readable (docs/encryption.md).

The new secret comes from --password-file PATH (its first line),
--key-file PATH (32 raw bytes or 64 hex digits), SNKV_PASSWORD, SNKV_KEY
(64 hex digits), or, when stdin is a terminal, a prompt that asks for the
password twice without echo. --kdf sets the cost of turning the password
into a key: default (64 MiB and about 0.2 s at every open), light (9 MiB,
for small devices), or explicit.

Then the file is rewritten (as 'snkv vacuum' does: it needs free disk space
of about the file's size) so that the values in the clear are gone from its
free space too. Copies made before (backups, the file system's own) keep
the values in the clear.

Interrupted (Ctrl-C, a crash), the store opens with the new secret and
reads right; run encrypt again with it to finish. On a store encrypted
already, encrypt with its secret only finishes such an interrupted
encryption and rewrites the file; 'snkv rekey' changes the secret. With --create, a missing FILE becomes a new encrypted store.`,
		Example: `  snkv encrypt app.db                          # asks for the password twice
  snkv encrypt app.db --password-file pw.txt --kdf light
  snkv encrypt app.db --key-file app.key`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			if _, err := parseKDF(kdfFlag); err != nil {
				return err
			}
			if _, err := a.secret.given(); err != nil {
				return err
			}
			a.encrypting = true
			a.onEncrypted = func() error {
				// Encrypted already: open it with the secret given, which
				// finishes an encryption that was interrupted. Never ask
				// for it: the user means to type a new one.
				flag, _ := a.secret.given()
				if (flag == "" && !a.secret.fromEnv()) || a.secret.prompt {
					return fmt.Errorf("%s: the store is encrypted already ('snkv rekey' changes its password or key; to finish an interrupted encryption, run encrypt again with --password-file, --key-file, %s or %s)", path, passwordEnv, keyEnv)
				}
				return nil
			}
			return a.withStore(path, true, func(db *kvstore.Store) error {
				if a.unlocked {
					// Opening it finished an encryption that was
					// interrupted, if one was (the library then clears
					// the file as after any encryption).
					if a.json {
						return a.emit(map[string]any{"file": path, "encrypted": true, "already": true})
					}
					_, err := fmt.Fprintf(a.out, "%s: encrypted already; the %s given opens it\n", path, secretKindGiven(&a.secret))
					return err
				}
				s, kdf, err := a.convert(cmd, path, &a.secret, kdfFlag, conversion{
					needs: fmt.Sprintf("encrypt needs the new password or key: --password-file PATH, --key-file PATH, %s or %s, or a terminal on stdin to ask for it", passwordEnv, keyEnv),
					doing: "encrypting",
					stopped: func(s *secret) string {
						return fmt.Sprintf("the encryption stopped at a batch boundary; the store opens with the new %s, and 'snkv encrypt %s' run again with it finishes", s.kind(), path)
					},
					run: db.Encrypt,
				})
				defer s.wipe()
				if err != nil && !finished(err) {
					return err
				}
				return errors.Join(a.sealResult(path, "encrypted", "", s, kdf, nil), scrubAdvice(err, path, "'snkv encrypt "+path+"' run again with the new secret"))
			})
		},
	}
	c.Flags().StringVar(&kdfFlag, "kdf", "default", kdfUsage)
	return c
}

// secretKindGiven is "password" or "key", as the flags or the environment
// give the secret.
func secretKindGiven(f *secretFlags) string {
	if f.keyFile != "" || (f.passwordFile == "" && os.Getenv(f.keyEnv) != "") {
		return "key"
	}
	return "password"
}

func (a *app) rekeyCommand() *cobra.Command {
	var kdfFlag string
	newSecret := secretFlags{
		passwordFlag: "new-password-file", keyFlag: "new-key-file", promptFlag: "new-password-prompt",
		passwordEnv: newPasswordEnv, keyEnv: newKeyEnv,
	}
	c := &cobra.Command{
		Use:   "rekey FILE",
		Short: "Change the password or key of an encrypted store",
		Long: `Give an encrypted store a new password or key: every value is sealed again
under a new data key, in small transactions. The current secret is given
as to any command (--password-file, --key-file, SNKV_PASSWORD, SNKV_KEY, or
the prompt); the new one with --new-password-file PATH, --new-key-file PATH,
SNKV_NEW_PASSWORD, SNKV_NEW_KEY, or a prompt that asks for it twice. A
password may replace a key and the other way round. --kdf sets the new
password's cost, as for encrypt. Then the file is rewritten, as after
encrypt, so that values sealed under the old key are gone from its free
space.

Until rekey ends both secrets open the store; interrupted, the store opens
with either, and any command run with one finishes the re-key. Re-key
while no other program has the store open: one that has it keeps using
the old key.`,
		Example: `  snkv rekey app.db --password-file old.txt --new-password-file new.txt
  SNKV_PASSWORD=... SNKV_NEW_KEY=$(cat app.hexkey) snkv rekey app.db`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			if _, err := parseKDF(kdfFlag); err != nil {
				return err
			}
			if _, err := newSecret.given(); err != nil {
				return err
			}
			a.needEncrypted = "re-key"
			return a.withStore(path, true, func(db *kvstore.Store) error {
				if !a.unlocked {
					return fmt.Errorf("%s: the store is not encrypted: nothing to re-key ('snkv encrypt %s' encrypts it)", path, path)
				}
				s, kdf, err := a.convert(cmd, path, &newSecret, kdfFlag, conversion{
					needs: fmt.Sprintf("rekey needs the new password or key: --new-password-file PATH, --new-key-file PATH, %s or %s, or a terminal on stdin to ask for it", newPasswordEnv, newKeyEnv),
					doing: "re-keying",
					stopped: func(*secret) string {
						return "the re-key stopped at a batch boundary; the store opens with the old secret or the new one, and any command run with either finishes it"
					},
					run: db.Rekey,
				})
				defer s.wipe()
				if err != nil && !finished(err) {
					return err
				}
				return errors.Join(a.sealResult(path, "re-keyed", "; every value is sealed again, and only the new "+s.kind()+" opens the store", s, kdf, map[string]any{"rekeyed": true}), scrubAdvice(err, path, "'snkv vacuum "+path+"' run with the new secret"))
			})
		},
	}
	f := c.Flags()
	f.StringVar(&newSecret.passwordFile, "new-password-file", "", "read the new password from the first line of `PATH`")
	f.StringVar(&newSecret.keyFile, "new-key-file", "", "read the new key from `PATH` (32 raw bytes or 64 hex digits)")
	f.BoolVar(&newSecret.prompt, "new-password-prompt", false, "ask for the new password on the terminal, twice (the default on a terminal when no other source is given)")
	f.StringVar(&kdfFlag, "kdf", "default", kdfUsage)
	return c
}

func (a *app) decryptCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "decrypt FILE",
		Short: "Remove the encryption of a store: every value back in the clear",
		Long: `Remove the store's encryption: every value is written back in the clear,
in small transactions, and the store then opens without a password. It
needs the current password or key, given as to any command.
Interrupted, the store opens with the secret, and any command run with it
finishes the decryption.`,
		Example: `  snkv decrypt app.db --password-file pw.txt`,
		Args:    nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			a.needEncrypted = "decrypt"
			return a.withStore(path, true, func(db *kvstore.Store) error {
				if !a.unlocked {
					return fmt.Errorf("%s: the store is not encrypted: nothing to decrypt", path)
				}
				var bad error // rows the decryption left as they were
				if db.Encrypted() {
					// Otherwise opening it finished a decryption a crash
					// had interrupted.
					bar := a.progress(-1, "decrypting", "")
					err := db.RemoveEncryption(cmd.Context())
					bar.done()
					if interrupted(cmd.Context(), err) {
						return interruptedf("interrupted: the decryption stopped at a batch boundary; the store opens with its secret, and any command run with it finishes the decryption")
					}
					if err != nil && !finished(err) {
						return err
					}
					bad = err
				}
				if a.json {
					return errors.Join(a.emit(map[string]any{"file": path, "encrypted": false}), bad)
				}
				_, err := fmt.Fprintf(a.out, "%s: decrypted: every value is stored in the clear, and the store opens without a password or key\n", path)
				return errors.Join(err, bad)
			})
		},
	}
}

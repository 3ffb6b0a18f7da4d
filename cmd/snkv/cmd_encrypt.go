package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

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

package main

import (
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

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

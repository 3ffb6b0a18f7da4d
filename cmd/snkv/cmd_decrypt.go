package main

import (
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

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

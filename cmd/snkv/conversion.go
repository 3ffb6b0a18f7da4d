package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

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

package kvstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/columnfamily"
	"github.com/snkv-go/snkv/internal/seal"
)

// Encryption opens an encrypted store, or encrypts a store in place
// (Options.Encryption, Store.Encrypt, Store.Rekey). Set Password or Key,
// not both. See docs/encryption.md for what is sealed and what is not.
type Encryption struct {
	// Password is turned into the key-encryption key with Argon2id, at the
	// cost the store's header records (KDF when the password is set).
	Password []byte
	// Key is a raw 32-byte key-encryption key, for users who manage keys
	// themselves (a key store, an HSM, a platform keychain).
	Key []byte
	// KDF is the cost of deriving a key from Password when it is set: at
	// encryption, or by Rekey. The zero value is DefaultKDF. Opening an
	// existing store uses the cost recorded in it, whatever this says.
	KDF KDF
}

// KDF is the cost of Argon2id, the password hash that turns a password
// into a key.
type KDF struct {
	// Time is the number of passes over the memory (1 to 64).
	Time uint32
	// MemoryKiB is the memory used, in KiB (8 per thread to 4 GiB).
	MemoryKiB uint32
	// Threads is the number of lanes (at least 1).
	Threads uint8
}

// DefaultKDF is the cost used when Encryption.KDF is zero, SNKV's: 64 MiB,
// 3 passes, 1 lane (about 0.2 s on a 2-core server; docs/encryption.md).
var DefaultKDF = KDF(seal.DefaultKDF)

// LightKDF is a cost for devices that cannot spare 64 MiB: 9 MiB, 4
// passes, 1 lane (docs/encryption.md gives its time and what it trades).
var LightKDF = KDF(seal.LightKDF)

func (e *Encryption) secret() (seal.Secret, error) {
	s := seal.Secret{Password: e.Password, Key: e.Key, KDF: seal.KDF(e.KDF)}
	if err := s.Validate(); err != nil {
		return s, err
	}
	return s, nil
}

// testEncryption, set by the package's tests (SNKV_TEST_ENCRYPTION=1),
// is the secret every Open without Options.Encryption uses.
var testEncryption *Encryption

// sealBatch is how many values one conversion transaction rewrites.
func (s *Store) sealBatch() int {
	if s.opts.UpgradeBatch > 0 {
		return s.opts.UpgradeBatch
	}
	return columnfamily.UpgradeBatch
}

// openSeal checks the store's encryption against opts.Encryption as Open
// returns it: a store without encryption opened with a secret is
// encrypted now, an encrypted one is unlocked (and a conversion a crash
// interrupted is finished), and an encrypted one without a secret, or with
// the wrong one, is refused with nothing written.
func (s *Store) openSeal(ctx context.Context) error {
	h := s.reg.SealHeader()
	enc := s.opts.Encryption
	if s.opts.keyless {
		return nil
	}
	if enc == nil && testEncryption != nil {
		// The test suite run against encrypted stores: every store it can
		// encrypt is, and opened with the suite's key.
		if h == nil && (s.opts.ReadOnly || !s.reg.Formatted()) {
			return nil
		}
		enc = testEncryption
	}
	switch {
	case h == nil && enc == nil:
		return nil
	case h != nil && enc == nil:
		return fmt.Errorf("%w: the store is encrypted: open it with Options.Encryption", ErrAuth)
	}
	secret, err := enc.secret()
	if err != nil {
		return fmt.Errorf("%w: Encryption: %s", ErrInvalidOption, err)
	}
	if h == nil {
		if s.opts.ReadOnly {
			return fmt.Errorf("%w: the store is not encrypted, and encrypting it needs a writable open", ErrReadOnly)
		}
		return s.encrypt(ctx, secret)
	}
	kr, err := unlock(h, secret)
	if err != nil {
		return err
	}
	if err := s.follow(kr); err != nil {
		kr.Destroy()
		return err
	}
	if kr.Job() != seal.JobNone && !s.opts.ReadOnly {
		// A conversion a crash stopped: finish it. Read-only, the rows say
		// their form, and both forms read.
		return s.finishJob(ctx)
	}
	return nil
}

// unlock opens header h with secret, mapping the failures to sentinels.
func unlock(h []byte, secret seal.Secret) (*seal.Keyring, error) {
	kr, err := seal.Unlock(h, secret)
	switch {
	case errors.Is(err, seal.ErrOpen):
		return nil, fmt.Errorf("%w: wrong password or key, or a changed encryption header", ErrAuth)
	case errors.Is(err, seal.ErrHeader):
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %s", ErrInvalidArgument, err)
	}
	return kr, nil
}

// follow makes the store's row codec follow keyring kr.
func (s *Store) follow(kr *seal.Keyring) error {
	st, err := kr.State()
	if err != nil {
		return err
	}
	s.keyring = kr
	s.reg.SetSeal(st)
	return nil
}

// writeHeader stores the encryption header h (nil: none) in a write
// transaction of its own.
func (s *Store) writeHeader(ctx context.Context, h []byte) error {
	return s.Update(ctx, func(tx *Tx) error {
		return columnfamily.WriteSealHeader(tx.Context(), tx.tx.Conn(), h)
	})
}

// encrypt encrypts a store without encryption with secret.
func (s *Store) encrypt(ctx context.Context, secret seal.Secret) error {
	if !s.reg.Formatted() {
		return fmt.Errorf("%w: a version-1 store cannot be encrypted: Upgrade it first", ErrVersion)
	}
	kr, err := seal.Create(secret)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrInvalidArgument, err)
	}
	if err := s.beginJob(ctx, kr); err != nil {
		if s.keyring != kr {
			kr.Destroy() // nothing recorded: the store stays in the clear
		}
		return err
	}
	return nil
}

// beginJob records the conversion keyring kr has begun in the header,
// makes the codec follow it and runs it to its end. When the header could
// not be written the job is cancelled and nothing changed; a failure after
// that leaves the job recorded, for the next conversion or Open to finish.
func (s *Store) beginJob(ctx context.Context, kr *seal.Keyring) error {
	h, err := kr.Header()
	if err == nil {
		err = s.writeHeader(ctx, h)
	}
	if err != nil {
		kr.Cancel()
		return err
	}
	if err := s.follow(kr); err != nil {
		return err
	}
	return s.finishJob(ctx)
}

// resume finishes a conversion an earlier call left part way (it failed
// after recording its job), before another one starts.
func (s *Store) resume(ctx context.Context) error {
	if s.keyring == nil || s.keyring.Job() == seal.JobNone {
		return nil
	}
	return s.finishJob(ctx)
}

// finishJob runs the conversion the keyring records to its end: every value
// rewritten in the form it wants, then the header that ends it.
func (s *Store) finishJob(ctx context.Context) error {
	kr := s.keyring
	reseal := func() error {
		_, err := s.reg.Reseal(ctx, s.sealBatch(), nil)
		return err
	}
	if kr.Job() == seal.JobDecrypt {
		// What it leaves behind is sealed: nothing to scrub.
		if err := reseal(); err != nil {
			return err
		}
	} else if err := s.scrubbed(ctx, reseal); err != nil {
		return err
	}
	h, err := kr.Finish()
	if err != nil {
		return err
	}
	if err := s.writeHeader(ctx, h); err != nil {
		return err
	}
	if h == nil {
		kr.Destroy()
		s.keyring = nil
		s.reg.SetSeal(nil)
		return nil
	}
	return s.follow(kr)
}

// scrubbed runs fn, a conversion that leaves the values it replaced (in
// the clear, or sealed under a key being retired) in the file's free space:
// in freed cells, in the gaps SQLite leaves when it moves cells between
// pages, in free pages and in the WAL. A VACUUM then rebuilds the file from
// its live content, and a TRUNCATE checkpoint copies the WAL into it and
// empties it. (SQLite's secure_delete alone is not enough: it zeroes freed
// cells and pages but not the gaps a page split leaves.) When readers hold
// the checkpoint up, the next checkpoint that completes empties the WAL.
func (s *Store) scrubbed(ctx context.Context, fn func() error) error {
	if err := fn(); err != nil || s.db.Memory() {
		return err
	}
	if err := s.Vacuum(ctx); err != nil {
		return err
	}
	_, err := s.Checkpoint(ctx, CheckpointTruncate)
	return err
}

// sealOp runs one of the conversions of an open store, one at a time.
func (s *Store) sealOp(ctx context.Context, op string, fn func() error) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	if s.opts.ReadOnly {
		return fmt.Errorf("snkv: %s: %w", op, ErrReadOnly)
	}
	if s.db.Closed() {
		return fmt.Errorf("snkv: %s: %w", op, ErrClosed)
	}
	s.sealMu.Lock()
	defer s.sealMu.Unlock()
	if err := fn(); err != nil {
		return fmt.Errorf("snkv: %s: %w", op, err)
	}
	return nil
}

// Encrypted reports whether the store is encrypted (false for a nil
// Store).
func (s *Store) Encrypted() bool {
	return s != nil && s.reg.Sealing()
}

// Encrypt encrypts a store without encryption with e: every value of
// every column family (and of the sealed hidden tables, such as a time
// series' values) is sealed in place, in transactions of
// Options.UpgradeBatch values. Reads and writes go on meanwhile. A crash
// part way leaves a store that Open with e finishes converting, and that
// every read of reads right. It fails with ErrExists if the store is
// encrypted already.
func (s *Store) Encrypt(ctx context.Context, e Encryption) error {
	return s.sealOp(ctx, "encrypt", func() error {
		if err := s.resume(ctx); err != nil {
			return err
		}
		if s.keyring != nil {
			return fmt.Errorf("%w: the store is encrypted already (Rekey changes its key)", ErrExists)
		}
		secret, err := e.secret()
		if err != nil {
			return fmt.Errorf("%w: %s", ErrInvalidArgument, err)
		}
		return s.encrypt(ctx, secret)
	})
}

// Rekey seals every value again under a new data key, which e (a new
// password or key) opens from then on; the old password or key stops
// opening the store once Rekey returns. Until then both open it, and a
// crash leaves a store that Open with either finishes re-keying. It fails
// with ErrInvalidArgument on a store that is not encrypted.
//
// Another process that has the store open keeps using the key it opened
// with: re-key while no other process has the store open.
func (s *Store) Rekey(ctx context.Context, e Encryption) error {
	return s.sealOp(ctx, "re-key", func() error {
		if err := s.resume(ctx); err != nil {
			return err
		}
		if s.keyring == nil {
			return fmt.Errorf("%w: the store is not encrypted", ErrInvalidArgument)
		}
		secret, err := e.secret()
		if err != nil {
			return fmt.Errorf("%w: %s", ErrInvalidArgument, err)
		}
		if err := s.keyring.BeginRekey(secret); err != nil {
			return fmt.Errorf("%w: %s", ErrInvalidArgument, err)
		}
		return s.beginJob(ctx, s.keyring)
	})
}

// RemoveEncryption puts every value back in the clear and removes the
// store's encryption: from then on it opens without a password. A crash
// part way leaves a store that Open with the password finishes
// decrypting. It fails with ErrInvalidArgument on a store that is not
// encrypted.
func (s *Store) RemoveEncryption(ctx context.Context) error {
	return s.sealOp(ctx, "remove encryption", func() error {
		if err := s.resume(ctx); err != nil {
			return err
		}
		if s.keyring == nil {
			return fmt.Errorf("%w: the store is not encrypted", ErrInvalidArgument)
		}
		if err := s.keyring.BeginDecrypt(); err != nil {
			return fmt.Errorf("%w: %s", ErrInvalidArgument, err)
		}
		return s.beginJob(ctx, s.keyring)
	})
}

// SealHiddenTable marks the hidden table name of kind sealed, for a layer
// whose table was made before it could ask for that with
// CreateHiddenTable's HiddenSealed; in an encrypted store the values it
// holds are sealed now, in batches. It does nothing to a table already
// sealed.
func (s *Store) SealHiddenTable(ctx context.Context, kind, name string) error {
	return s.sealOp(ctx, "seal hidden table", func() error {
		return s.reg.SealHidden(ctx, kind, name, s.sealBatch())
	})
}

// closeSeal overwrites the keys the store holds when it closes. The
// ciphers made from the data keys stay reachable from the cursors still
// open (a cursor opened before Close goes on with its snapshot) and go
// with the last of them.
func (s *Store) closeSeal() {
	s.sealMu.Lock()
	defer s.sealMu.Unlock()
	if s.keyring != nil {
		s.keyring.Destroy()
		s.keyring = nil
	}
}

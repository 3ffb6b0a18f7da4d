package kvstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/snkv-go/snkv/internal/catalog"
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
	// encryption, or by Rekey (at most KDFOpenLimit). The zero value is
	// DefaultKDF. Opening an existing store uses the cost recorded in it;
	// a recorded cost above KDFOpenLimit (written by an older version) is
	// derived with only if KDF is at least as large in each field.
	KDF KDF
	// EncryptInPlace lets Open encrypt a store in the clear with this
	// secret before it returns, as Store.Encrypt does. Without it, Open
	// refuses an existing store in the clear with ErrNotEncrypted and
	// leaves it as it was: a mistyped secret in a configuration must not
	// lock a store's data under the typo. A store that Open creates (a new
	// or empty file) is encrypted either way.
	EncryptInPlace bool
}

// KDF is the cost of Argon2id, the password hash that turns a password
// into a key. A new password's cost is at most KDFOpenLimit.
type KDF struct {
	// Time is the number of passes over the memory (1 to 10).
	Time uint32
	// MemoryKiB is the memory used, in KiB (8 per thread to 64 MiB).
	MemoryKiB uint32
	// Threads is the number of lanes (1 to 16).
	Threads uint8
}

// DefaultKDF is the cost used when Encryption.KDF is zero, SNKV's: 64 MiB,
// 3 passes, 1 lane (about 0.2 s on a 2-core server; docs/encryption.md).
var DefaultKDF = KDF(seal.DefaultKDF)

// LightKDF is a cost for devices that cannot spare 64 MiB: 9 MiB, 4
// passes, 1 lane (docs/encryption.md gives its time and what it trades).
var LightKDF = KDF(seal.LightKDF)

// KDFOpenLimit is the largest key derivation cost: 64 MiB (DefaultKDF's,
// the largest documented setting), 10 passes and 16 lanes. A new password
// is given at most this cost (more is ErrInvalidArgument, or
// ErrInvalidOption from Open), and Open derives a key at no more than it:
// a header that records more, damaged (and its checksum made to match) or
// forged, is refused with ErrInvalidOption before anything is derived,
// unless Encryption.KDF is at least the recorded cost (a store an older
// version gave more). So no header can make Open allocate more than
// 64 MiB or run longer than 10 passes over it.
var KDFOpenLimit = KDF(seal.OpenLimit)

// Errors of encryption (see also ErrAuth).
var (
	// ErrNotEncrypted: a store in the clear opened with Options.Encryption
	// (and without Encryption.EncryptInPlace), or Rekey or RemoveEncryption
	// of a store in the clear (this also matches ErrInvalidArgument).
	// Nothing in the file changes.
	ErrNotEncrypted = errors.New("snkv: the store is not encrypted")
	// ErrScrubPending: a conversion (Encrypt, Rekey) is done, and the
	// store opens with its new secret only, but the file still holds the
	// form its values had before (in the clear, or sealed under the
	// retired data key) and, after a re-key, the headers that wrapped a
	// data key under the retired secret: read transactions that began
	// before the conversion's end (an open Cursor or iteration, a View or
	// read-only Tx, another process or Store reading the file; never this
	// store's own point reads, however many) kept the WAL from being
	// emptied for Options.BusyTimeout. Once they end,
	// Store.FinishConversion (or the next writable Open, or the next
	// conversion) clears it. It also matches ErrBusy.
	ErrScrubPending = fmt.Errorf("%w: the old form of the values is still in the file", ErrBusy)
)

// BadRowsError is the error of a conversion (Encrypt, Rekey,
// RemoveEncryption, and a layer sealing a hidden table) that finished but
// left rows it could not read as they were: values that fail their
// checksum or authentication (damaged, forged, or written in another form
// by a process that had the store open before the conversion). Reading
// them fails as it did before, CheckIntegrity names them, and a row left
// by Encrypt stays in the clear until it is deleted or written again. The
// conversion itself is complete. A change feed's kept value no key opens
// is left and counted the same way, named "change log". It matches
// ErrCorrupt.
type BadRowsError struct {
	// Rows is the number of rows left as they were.
	Rows int64
	// Problems names them, as IntegrityReport.Problems does (at most 100
	// per column family, and for the change log, then a count).
	Problems []string
}

// Error says how many rows were left and names them.
func (e *BadRowsError) Error() string {
	what := "rows"
	if e.Rows == 1 {
		what = "row"
	}
	msg := fmt.Sprintf("finished, but %d %s could not be read and were left as they were", e.Rows, what)
	if e.Rows == 1 {
		msg = "finished, but 1 row could not be read and was left as it was"
	}
	for _, p := range e.Problems {
		msg += "; " + p
	}
	return msg
}

// Is makes a BadRowsError match ErrCorrupt.
func (e *BadRowsError) Is(target error) bool { return target == ErrCorrupt }

// badRows returns the BadRowsError of rep, or nil when every row was read.
func badRows(rep catalog.ResealReport) error {
	if rep.Bad == 0 {
		return nil
	}
	return &BadRowsError{Rows: rep.Bad, Problems: rep.Problems}
}

func (e *Encryption) secret() (seal.Secret, error) {
	s := seal.Secret{Password: e.Password, Key: e.Key, KDF: seal.KDF(e.KDF)}
	if err := s.Validate(); err != nil {
		return s, err
	}
	return s, nil
}

// checkEncryption refuses a bad Options.Encryption before Open touches
// the file at path: a store Open created and then refused would be left
// in the clear, and the corrected secret refused with ErrNotEncrypted. A
// cost above KDFOpenLimit may open a store an older version gave it, so
// it is refused here only when Open would create the store (path missing
// or empty, or in memory); otherwise openSeal refuses it for a new
// secret, leaving the file as it was.
func (o *Options) checkEncryption(path string) error {
	if o.Encryption == nil || o.keyless {
		return nil
	}
	secret, err := o.Encryption.secret()
	if err != nil {
		return fmt.Errorf("%w: Encryption: %s", ErrInvalidOption, err)
	}
	if path != "" {
		fi, err := os.Stat(path)
		if err == nil && fi.Size() > 0 || err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil
		}
	}
	if err := secret.ValidateNew(); err != nil {
		return fmt.Errorf("%w: Encryption: %s", ErrInvalidOption, err)
	}
	return nil
}

// testEncryption, set by the package's tests (SNKV_TEST_ENCRYPTION=1),
// is the secret every Open without Options.Encryption uses.
var testEncryption *Encryption

// sealBatch is how many values one conversion transaction rewrites.
func (s *Store) sealBatch() int {
	if s.opts.UpgradeBatch > 0 {
		return s.opts.UpgradeBatch
	}
	return catalog.UpgradeBatch
}

// openSeal checks the store's encryption against opts.Encryption, writing
// nothing: an encrypted store is unlocked; a store in the clear opened
// with a secret is to be encrypted. An error is a refusal (no secret, the
// wrong one, a damaged header, a store in the clear opened read-only with
// a secret): Open discards the DB then, so that every file is left as it
// was found, the -shm included (the check runs before the DB ends its
// probe: engine.DB.EndProbe). A store in the clear is refused with
// ErrNotEncrypted unless Open created it or the caller asked for the
// conversion (EncryptInPlace). Otherwise it returns finish, which Open
// runs once the DB is an ordinary one: it makes the row codec follow the
// keys, encrypts a store in the clear, and finishes a conversion a crash
// interrupted.
func (s *Store) openSeal() (finish func(ctx context.Context) error, err error) {
	nothing := func(context.Context) error { return nil }
	h := s.reg.SealHeader()
	enc := s.opts.Encryption
	if s.opts.keyless {
		return nothing, nil
	}
	inPlace := enc != nil && enc.EncryptInPlace
	if enc == nil && testEncryption != nil {
		// The test suite run against encrypted stores: every store it can
		// encrypt is, and opened with the suite's key.
		if h == nil && (s.opts.ReadOnly || !s.reg.Formatted()) {
			return nothing, nil
		}
		enc, inPlace = testEncryption, true
	}
	switch {
	case h == nil && enc == nil:
		return nothing, nil
	case h != nil && enc == nil:
		return nil, fmt.Errorf("%w: the store is encrypted: open it with Options.Encryption", ErrAuth)
	}
	secret, err := enc.secret()
	if err != nil {
		return nil, fmt.Errorf("%w: Encryption: %s", ErrInvalidOption, err)
	}
	if h == nil {
		switch {
		case !inPlace && !s.reg.Created():
			return nil, fmt.Errorf("%w: it is a store in the clear: open it without Options.Encryption, or set Encryption.EncryptInPlace (or call Store.Encrypt) to encrypt it", ErrNotEncrypted)
		case s.opts.ReadOnly:
			return nil, fmt.Errorf("%w: the store is not encrypted, and encrypting it needs a writable open", ErrReadOnly)
		}
		if err := secret.ValidateNew(); err != nil {
			return nil, fmt.Errorf("%w: Encryption: %s", ErrInvalidOption, err)
		}
		return func(ctx context.Context) error { return s.encrypt(ctx, secret) }, nil
	}
	kr, err := unlock(h, secret, seal.KDF(enc.KDF))
	if err != nil {
		return nil, err
	}
	s.keyring = kr // for closeSeal, if Open fails before finish
	return func(ctx context.Context) error {
		if err := s.follow(kr, h); err != nil {
			return err
		}
		if s.opts.ReadOnly {
			// Read-only, the rows say their form, and both forms read.
			return nil
		}
		if s.reg.ScrubPending() {
			s.scrub = scrubVacuum
		}
		// A conversion a crash stopped, or a scrub it did not finish:
		// finish it. Rows no key reads are left for CheckIntegrity to
		// name, and a scrub that other processes' readers hold up for the
		// next Open.
		err := s.finishJob(ctx)
		var bad *BadRowsError
		if errors.As(err, &bad) || errors.Is(err, ErrScrubPending) {
			return nil
		}
		return err
	}, nil
}

// unlock opens header h with secret, deriving at no more than the larger
// of KDFOpenLimit and allow (the caller's Encryption.KDF), and maps the
// failures to sentinels.
func unlock(h []byte, secret seal.Secret, allow seal.KDF) (*seal.Keyring, error) {
	kr, err := seal.Unlock(h, secret, seal.OpenLimit.Max(allow))
	switch {
	case errors.Is(err, seal.ErrOpen):
		return nil, fmt.Errorf("%w: wrong password or key, or a changed encryption header", ErrAuth)
	case errors.Is(err, seal.ErrHeader):
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	case errors.Is(err, seal.ErrCost):
		return nil, fmt.Errorf("%w: %w (more than KDFOpenLimit: if that cost was set on purpose, give it in Encryption.KDF; otherwise the header was changed)", ErrInvalidOption, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %s", ErrInvalidArgument, err)
	}
	return kr, nil
}

// Encrypted reports whether the store is encrypted (false for a nil
// Store).
func (s *Store) Encrypted() bool {
	return s != nil && s.reg.Sealing()
}

// Encrypt encrypts a store without encryption with e: every value of
// every column family (and of the sealed hidden tables, such as a time
// series' values) is sealed in place, in transactions of
// Options.UpgradeBatch values. Reads and writes go on meanwhile. Then the
// file is rewritten (VACUUM) and its WAL emptied, so that no value is left
// in the clear in it; that waits up to Options.BusyTimeout for readers
// that began before (they may read the values in the clear until they
// end), without holding up writers meanwhile, and returns ErrScrubPending
// if they are still there.
//
// It fails with ErrExists if the store is encrypted already. A crash part
// way leaves a store that Open with e finishes converting, and that every
// read of reads right. Rows it cannot read are left as they were and
// reported with a *BadRowsError (see there): the store is encrypted all
// the same. Conversions of a store run one at a time: one called while
// another runs waits for it until ctx ends (then ctx's error, and nothing
// changed); so do Rekey, RemoveEncryption, FinishConversion and
// a layer sealing a hidden table.
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
// password or key) opens from then on. Once it returns nil, the old
// password or key opens nothing: the file, its WAL and its free pages hold
// no wrapping of a data key under it, and no value sealed under the
// retired data key (the file is rewritten and its WAL emptied, as after
// Encrypt, with ErrScrubPending when readers hold that up). Until then both secrets open the store, and a crash leaves a
// store that Open with either finishes re-keying. Rows it cannot read are
// left as they were and reported with a *BadRowsError; the re-key is
// complete all the same. It fails with ErrNotEncrypted (which also
// matches ErrInvalidArgument) on a store in the clear.
//
// Another process that has the store open keeps using the key it opened
// with: re-key while no other process has the store open. It waits for a
// conversion under way as Encrypt does.
func (s *Store) Rekey(ctx context.Context, e Encryption) error {
	return s.sealOp(ctx, "re-key", func() error {
		if err := s.resume(ctx); err != nil {
			return err
		}
		if s.keyring == nil {
			return fmt.Errorf("%w: %w", ErrInvalidArgument, ErrNotEncrypted)
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
// store's encryption: from then on it opens without a password. It does
// not rewrite the file: the values' sealed form, and the last encryption
// header, may stay in its free space, where the old secret still opens
// them. A crash part way leaves a store that Open with the password
// finishes decrypting. Rows it cannot read are left as they were and
// reported with a *BadRowsError. It fails with ErrNotEncrypted (which also
// matches ErrInvalidArgument) on a store in the clear. It waits for a
// conversion under way as Encrypt does.
func (s *Store) RemoveEncryption(ctx context.Context) error {
	return s.sealOp(ctx, "remove encryption", func() error {
		if err := s.resume(ctx); err != nil {
			return err
		}
		if s.keyring == nil {
			return fmt.Errorf("%w: %w", ErrInvalidArgument, ErrNotEncrypted)
		}
		if err := s.keyring.BeginDecrypt(); err != nil {
			return fmt.Errorf("%w: %s", ErrInvalidArgument, err)
		}
		return s.beginJob(ctx, s.keyring)
	})
}

// FinishConversion finishes what an earlier Encrypt, Rekey or
// RemoveEncryption left undone: the values not yet converted (its context
// was cancelled, or a write failed part way), or the rewrite of the file
// that readers held up (ErrScrubPending). It does nothing when nothing is
// left, and returns what those calls return.
func (s *Store) FinishConversion(ctx context.Context) error {
	return s.sealOp(ctx, "finish conversion", func() error {
		if s.keyring == nil && s.scrub == scrubNone {
			return nil
		}
		return s.finishJob(ctx)
	})
}

// sealHiddenTable is layer.SealHiddenTable (see internal/layer): it marks
// the hidden table name of kind sealed; in an encrypted store the values
// it holds are sealed now, in batches (rows it cannot read are left as
// they were and reported with a *BadRowsError).
func (s *Store) sealHiddenTable(ctx context.Context, kind, name string) error {
	return s.sealOp(ctx, "seal hidden table", func() error {
		rep, err := s.reg.SealHidden(ctx, kind, name, s.sealBatch())
		if err != nil {
			return err
		}
		return badRows(rep)
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

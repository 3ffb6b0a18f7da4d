package seal

import (
	"errors"
	"fmt"
)

// The secrets that open a store, and the cost of deriving a key from a
// password.

// KDF is the cost of deriving a key from a password with Argon2id.
type KDF struct {
	// Time is the number of passes over the memory.
	Time uint32
	// MemoryKiB is the memory used, in KiB.
	MemoryKiB uint32
	// Threads is the degree of parallelism (lanes).
	Threads uint8
}

// DefaultKDF is the cost SNKV uses: 64 MiB, 3 passes, 1 lane.
var DefaultKDF = KDF{Time: 3, MemoryKiB: 64 << 10, Threads: 1}

// LightKDF is a cost for devices that cannot spare 64 MiB: 9 MiB, 4
// passes, 1 lane (a setting of the same strength in OWASP's guidance).
var LightKDF = KDF{Time: 4, MemoryKiB: 9 << 10, Threads: 1}

// OpenLimit is the largest cost an open derives a key with unless its
// caller allows more (Unlock's limit): DefaultKDF's memory (the largest
// documented setting), 10 passes and 16 lanes. It is also the largest cost
// a new secret may be given (Secret.Validate for a new cost), so a store
// keeps within it unless an older version wrote its header.
var OpenLimit = KDF{Time: 10, MemoryKiB: 64 << 10, Threads: 16}

// Absolute bounds on a cost, whatever a caller allows: a cost above them
// is never derived with.
const (
	maxTime      = 64
	maxMemoryKiB = 4 << 20 // 4 GiB
)

// Validate checks that the cost is within the absolute bounds (1 to 64
// passes, 8 KiB per lane to 4 GiB, at least 1 lane): a cost an open may be
// allowed to derive with.
func (p KDF) Validate() error {
	switch {
	case p.Time < 1 || p.Time > maxTime:
		return fmt.Errorf("key derivation passes %d (1 to %d)", p.Time, maxTime)
	case p.Threads < 1:
		return errors.New("key derivation threads must be at least 1")
	case p.MemoryKiB < 8*uint32(p.Threads) || p.MemoryKiB > maxMemoryKiB:
		return fmt.Errorf("key derivation memory %d KiB (%d KiB to 4 GiB)", p.MemoryKiB, 8*uint32(p.Threads))
	}
	return nil
}

// Within reports whether every field of p is at most limit's.
func (p KDF) Within(limit KDF) bool {
	return p.Time <= limit.Time && p.MemoryKiB <= limit.MemoryKiB && p.Threads <= limit.Threads
}

// Max returns the larger of p and q in each field.
func (p KDF) Max(q KDF) KDF {
	return KDF{Time: max(p.Time, q.Time), MemoryKiB: max(p.MemoryKiB, q.MemoryKiB), Threads: max(p.Threads, q.Threads)}
}

// ValidateNew checks a cost a new secret is given: within the bounds and
// at most OpenLimit, so that every later open can derive with it.
func (p KDF) ValidateNew() error {
	if err := p.Validate(); err != nil {
		return err
	}
	if !p.Within(OpenLimit) {
		return fmt.Errorf("key derivation cost of %d passes, %d KiB and %d lanes is above the largest a store takes (%d passes, %d MiB, %d lanes)",
			p.Time, p.MemoryKiB, p.Threads, OpenLimit.Time, OpenLimit.MemoryKiB>>10, OpenLimit.Threads)
	}
	return nil
}

// Secret is what opens an encrypted store: a password, from which Argon2id
// derives the key-encryption key, or a raw 32-byte key used as it is.
type Secret struct {
	Password []byte
	Key      []byte
	// KDF is the cost of deriving a key from Password when the secret is
	// first set (new encryption or a re-key); the zero value is
	// DefaultKDF. An existing store's cost is read from its header.
	KDF KDF
}

// Validate checks that exactly one of Password and Key is set, and sound.
// Its messages never include the secret.
func (s Secret) Validate() error {
	switch {
	case s.Password != nil && s.Key != nil:
		return errors.New("set a password or a key, not both")
	case s.Password == nil && s.Key == nil:
		return errors.New("no password or key")
	case s.Key != nil && len(s.Key) != KeySize:
		return fmt.Errorf("a key must be %d bytes, not %d", KeySize, len(s.Key))
	case s.Key == nil && len(s.Password) == 0:
		return errors.New("empty password")
	}
	if s.Password != nil {
		return s.kdf().Validate()
	}
	return nil
}

// ValidateNew is Validate for a secret being set (Create, BeginRekey):
// its cost must also be at most OpenLimit.
func (s Secret) ValidateNew() error {
	if err := s.Validate(); err != nil {
		return err
	}
	if s.Password != nil {
		return s.kdf().ValidateNew()
	}
	return nil
}

func (s Secret) kdf() KDF {
	if s.KDF == (KDF{}) {
		return DefaultKDF
	}
	return s.KDF
}

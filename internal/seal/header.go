package seal

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync/atomic"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/chacha20poly1305"
)

// Job is a conversion under way, recorded in the header so that a crash
// leaves a store that resumes it.
type Job uint8

// The conversions.
const (
	JobNone    Job = iota
	JobEncrypt     // values in the clear are being sealed
	JobRekey       // values are being sealed again under a new data key
	JobDecrypt     // values are being put back in the clear
)

func (j Job) String() string {
	if int(j) < len(jobNames) {
		return jobNames[j]
	}
	return fmt.Sprintf("job %d", uint8(j))
}

var jobNames = [...]string{JobNone: "none", JobEncrypt: "encrypt", JobRekey: "re-key", JobDecrypt: "decrypt"}

// Slot kinds.
const (
	slotPassword = 1
	slotKey      = 2
)

// slot is one secret that opens the store: how its key-encryption key is
// derived, and that key while the store is open.
type slot struct {
	kind uint8
	kdf  KDF
	salt [16]byte
	kek  []byte
}

func newSlot(s Secret) (slot, error) {
	sl := slot{kind: slotKey}
	if _, err := rand.Read(sl.salt[:]); err != nil {
		return sl, err
	}
	if s.Password != nil {
		sl.kind, sl.kdf = slotPassword, s.kdf()
	}
	sl.kek = sl.derive(s)
	return sl, nil
}

// derive returns the key-encryption key secret gives this slot.
func (sl *slot) derive(s Secret) []byte {
	if sl.kind == slotKey {
		return bytes.Clone(s.Key)
	}
	derivations.Add(1)
	return argon2.IDKey(s.Password, sl.salt[:], sl.kdf.Time, sl.kdf.MemoryKiB, sl.kdf.Threads, KeySize)
}

// Keyring is an unlocked store's keys: its data keys, the header's fields
// and the key-encryption key of every slot, kept while the store is open to
// write the header again when a conversion starts or ends.
type Keyring struct {
	store [16]byte
	gen   uint8 // generation parity of cur
	job   Job
	slots []slot
	cur   []byte // the data key of generation gen
	next  []byte // during a re-key, the data key of generation gen+1
	// final is, during a re-key, the header it ends with: the new data key
	// wrapped under the new secret alone, written at the start, so that
	// either secret can finish the job.
	final []byte
}

// Create returns the keyring of a store being encrypted with secret: a new
// store identifier and data key, and the job JobEncrypt.
func Create(s Secret) (*Keyring, error) {
	if err := s.ValidateNew(); err != nil {
		return nil, err
	}
	k := &Keyring{job: JobEncrypt, cur: make([]byte, KeySize)}
	if _, err := rand.Read(k.store[:]); err != nil {
		return nil, err
	}
	if _, err := rand.Read(k.cur); err != nil {
		return nil, err
	}
	sl, err := newSlot(s)
	if err != nil {
		return nil, err
	}
	k.slots = []slot{sl}
	return k, nil
}

// Job returns the conversion under way.
func (k *Keyring) Job() Job { return k.job }

// State returns what the row codec follows for the keyring now.
func (k *Keyring) State() (*State, error) {
	st := &State{}
	cur, err := newKey(k.cur, k.store, k.gen)
	if err != nil {
		return nil, err
	}
	st.keys[k.gen] = cur
	st.Write = cur
	switch k.job {
	case JobEncrypt:
		st.Plain = true
	case JobDecrypt:
		st.Plain, st.Write = true, nil
	case JobRekey:
		next, err := newKey(k.next, k.store, k.gen^1)
		if err != nil {
			return nil, err
		}
		st.keys[k.gen^1], st.Write = next, next
	}
	return st, nil
}

// BeginRekey starts a re-key to secret s: a new data key, and s as the
// slot that opens the store. Until the job ends, both the old and the new
// secret open the store and both data keys read; either can finish it.
func (k *Keyring) BeginRekey(s Secret) error {
	if err := s.ValidateNew(); err != nil {
		return err
	}
	if err := k.idle(); err != nil {
		return err
	}
	sl, err := newSlot(s)
	if err != nil {
		return err
	}
	next := make([]byte, KeySize)
	if _, err := rand.Read(next); err != nil {
		return err
	}
	end := &Keyring{store: k.store, gen: k.gen ^ 1, slots: []slot{sl}, cur: next}
	final, err := end.Header()
	if err != nil {
		return err
	}
	k.next, k.job, k.final = next, JobRekey, final
	k.slots = append(k.slots, sl)
	return nil
}

// BeginDecrypt starts putting every value back in the clear.
func (k *Keyring) BeginDecrypt() error {
	if err := k.idle(); err != nil {
		return err
	}
	k.job = JobDecrypt
	return nil
}

func (k *Keyring) idle() error {
	if k.job != JobNone {
		return fmt.Errorf("a %s is under way", k.job)
	}
	for _, sl := range k.slots {
		if sl.kek == nil {
			return errors.New("the store was opened with the secret a re-key replaced: open it with the new one")
		}
	}
	return nil
}

// Cancel undoes BeginRekey or BeginDecrypt when the header that records
// the job could not be written: the keyring is as it was before.
func (k *Keyring) Cancel() {
	switch k.job {
	case JobRekey:
		last := len(k.slots) - 1
		wipe(k.slots[last].kek)
		wipe(k.next)
		k.slots, k.next, k.final = k.slots[:last], nil, nil
	case JobDecrypt:
	default:
		return
	}
	k.job = JobNone
}

// End returns the header that ends the job (nil after a decryption: the
// store then has none), and ended, which makes the keyring follow it: call
// it once that header is stored, and not at all if it could not be. After
// a re-key only the new secret and data key remain.
func (k *Keyring) End() (h []byte, ended func(), err error) {
	switch k.job {
	case JobDecrypt:
		return nil, func() { k.job = JobNone }, nil
	case JobRekey:
		return k.final, k.endRekey, nil
	}
	job := k.job
	k.job = JobNone
	h, err = k.Header()
	k.job = job
	if err != nil {
		return nil, nil, err
	}
	return h, func() { k.job = JobNone }, nil
}

// endRekey makes the keyring the one a finished re-key leaves.
func (k *Keyring) endRekey() {
	wipe(k.cur)
	for _, sl := range k.slots[:len(k.slots)-1] {
		wipe(sl.kek)
	}
	k.cur, k.next, k.gen, k.final = k.next, nil, k.gen^1, nil
	k.slots = k.slots[len(k.slots)-1:]
	k.job = JobNone
}

// Finish is End with the header taken as stored.
func (k *Keyring) Finish() ([]byte, error) {
	h, ended, err := k.End()
	if err != nil {
		return nil, err
	}
	ended()
	return h, nil
}

// Destroy overwrites the keys the keyring holds. Keys handed to the AEAD
// (State) are copies the garbage collector reclaims once unreachable.
func (k *Keyring) Destroy() {
	wipe(k.cur)
	wipe(k.next)
	for _, sl := range k.slots {
		wipe(sl.kek)
	}
	k.slots = nil
}

func wipe(b []byte) {
	for i := range b {
		b[i] = 0
	}
}

// The header's encoding (version 2), all integers big-endian:
//
//	"snkvseal" 2 gen job store(16) nslots
//	per slot: kind time(4) memoryKiB(4) threads salt(16) len(2) wrapped
//	during a re-key: len(4) final
//	crc32c(4)
//
// wrapped seals the data keys (cur, then next during a re-key) under the
// slot's key-encryption key, with every byte of the header before the
// slots, and the slot's own fields, as associated data: a changed field
// fails authentication like a wrong secret. The CRC-32C (Castagnoli) of
// every byte before it catches a damaged header before anything is
// derived with its cost; it covers only bytes anyone can read, so it tells
// a password guesser nothing. Version 1 is the same without the checksum,
// and is still read.
var magic = []byte("snkvseal")

const (
	headerVersion = 2
	headerV1      = 1
)

// castagnoli is the table of the header's checksum.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (k *Keyring) fixed(version byte) []byte {
	b := append([]byte{}, magic...)
	b = append(b, version, k.gen, byte(k.job))
	b = append(b, k.store[:]...)
	return append(b, byte(len(k.slots)))
}

func (sl *slot) params(b []byte) []byte {
	b = append(b, sl.kind)
	b = binary.BigEndian.AppendUint32(b, sl.kdf.Time)
	b = binary.BigEndian.AppendUint32(b, sl.kdf.MemoryKiB)
	b = append(b, sl.kdf.Threads)
	return append(b, sl.salt[:]...)
}

// Header returns the encoded header of the keyring.
func (k *Keyring) Header() ([]byte, error) { return k.encode(headerVersion) }

// encode returns the header of the keyring in version (headerVersion, or
// headerV1 for the tests that read what older versions wrote).
func (k *Keyring) encode(version byte) ([]byte, error) {
	fixed := k.fixed(version)
	out := bytes.Clone(fixed)
	keys := append(bytes.Clone(k.cur), k.next...)
	defer wipe(keys)
	for i := range k.slots {
		sl := &k.slots[i]
		if sl.kek == nil {
			return nil, errors.New("a slot's secret is not known")
		}
		aead, err := chacha20poly1305.NewX(sl.kek)
		if err != nil {
			return nil, err
		}
		nonce := make([]byte, NonceSize)
		if _, err := rand.Read(nonce); err != nil {
			return nil, err
		}
		p := sl.params(nil)
		wrapped := aead.Seal(nonce, nonce, keys, slotAD(fixed, p, k.final))
		out = append(out, p...)
		out = binary.BigEndian.AppendUint16(out, uint16(len(wrapped)))
		out = append(out, wrapped...)
	}
	if k.job == JobRekey {
		out = binary.BigEndian.AppendUint32(out, uint32(len(k.final)))
		out = append(out, k.final...)
	}
	if version == headerV1 {
		return out, nil
	}
	return binary.BigEndian.AppendUint32(out, crc32.Checksum(out, castagnoli)), nil
}

// slotAD is the associated data of a slot's wrapped keys.
func slotAD(fixed, params, final []byte) []byte {
	ad := append(bytes.Clone(fixed), params...)
	return append(ad, final...)
}

// ErrHeader is the error of a header that cannot be parsed.
var ErrHeader = errors.New("encryption header is damaged or of an unknown version")

type rawSlot struct {
	slot
	params, wrapped []byte
}

// ErrCost is the error of a header whose key derivation cost is above the
// limit its open allows (see Unlock).
var ErrCost = errors.New("the store's key derivation cost is above what this open allows")

// derivations counts the keys derived from passwords, for tests that check
// that a refused header is refused before any.
var derivations atomic.Int64

// Unlock opens the encoded header h with secret s, deriving a key from a
// password at no more than limit's cost. A header that cannot be parsed,
// or whose checksum does not match, gives ErrHeader, and one that asks for
// more than limit gives ErrCost, both before anything is derived; a secret
// that opens no slot, or a header whose fields were changed (and its
// checksum made to match), gives ErrOpen.
func Unlock(h []byte, s Secret, limit KDF) (*Keyring, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	k, slots, fixed, final, err := parse(h)
	if err != nil {
		return nil, err
	}
	want := uint8(slotKey)
	if s.Password != nil {
		want = slotPassword
	}
	costly := false
	for _, rs := range slots {
		if rs.kind != want {
			continue
		}
		if rs.kind == slotPassword && !rs.kdf.Within(limit) {
			costly = true
			continue
		}
		kek := rs.derive(s)
		aead, err := chacha20poly1305.NewX(kek)
		if err != nil {
			return nil, err
		}
		keys, err := aead.Open(nil, rs.wrapped[:NonceSize], rs.wrapped[NonceSize:], slotAD(fixed, rs.params, final))
		if err != nil {
			wipe(kek)
			continue
		}
		n := KeySize
		if k.job == JobRekey {
			n = 2 * KeySize
		}
		if len(keys) != n {
			wipe(keys)
			return nil, ErrHeader
		}
		k.cur = keys[:KeySize:KeySize]
		if k.job == JobRekey {
			k.next = keys[KeySize:]
		}
		for _, o := range slots {
			sl := o.slot
			if subtle.ConstantTimeCompare(o.params, rs.params) == 1 {
				sl.kek = kek
			}
			// Another secret's slot keeps a nil key-encryption key: it is
			// never wrapped again (a re-key ends with the header it wrote
			// at its start, final).
			k.slots = append(k.slots, sl)
		}
		k.final = final
		return k, nil
	}
	if costly {
		return nil, ErrCost
	}
	return nil, ErrOpen
}

func parse(h []byte) (k *Keyring, slots []rawSlot, fixed, final []byte, err error) {
	fixedLen := len(magic) + 3 + 16 + 1
	if len(h) < fixedLen || !bytes.Equal(h[:len(magic)], magic) {
		return nil, nil, nil, nil, ErrHeader
	}
	switch h[len(magic)] {
	case headerVersion:
		n := len(h) - 4
		if n < fixedLen || crc32.Checksum(h[:n], castagnoli) != binary.BigEndian.Uint32(h[n:]) {
			return nil, nil, nil, nil, ErrHeader
		}
		h = h[:n]
	case headerV1:
	default:
		return nil, nil, nil, nil, ErrHeader
	}
	k = &Keyring{gen: h[len(magic)+1], job: Job(h[len(magic)+2])}
	copy(k.store[:], h[len(magic)+3:])
	n := int(h[fixedLen-1])
	if k.gen > 1 || k.job > JobDecrypt || n < 1 || n > 2 {
		return nil, nil, nil, nil, ErrHeader
	}
	fixed, rest := h[:fixedLen], h[fixedLen:]
	const paramsLen = 1 + 4 + 4 + 1 + 16
	for range n {
		if len(rest) < paramsLen+2 {
			return nil, nil, nil, nil, ErrHeader
		}
		var rs rawSlot
		rs.params = rest[:paramsLen]
		rs.kind = rest[0]
		rs.kdf = KDF{Time: binary.BigEndian.Uint32(rest[1:]), MemoryKiB: binary.BigEndian.Uint32(rest[5:]), Threads: rest[9]}
		copy(rs.salt[:], rest[10:26])
		wl := int(binary.BigEndian.Uint16(rest[paramsLen:]))
		rest = rest[paramsLen+2:]
		if wl < NonceSize+chacha20poly1305.Overhead || len(rest) < wl {
			return nil, nil, nil, nil, ErrHeader
		}
		rs.wrapped, rest = rest[:wl], rest[wl:]
		switch {
		case rs.kind != slotPassword && rs.kind != slotKey:
			return nil, nil, nil, nil, ErrHeader
		case rs.kind == slotPassword && rs.kdf.Validate() != nil:
			return nil, nil, nil, nil, ErrHeader
		}
		slots = append(slots, rs)
	}
	if k.job == JobRekey {
		if len(rest) < 4 || uint32(len(rest)-4) != binary.BigEndian.Uint32(rest) || !IsHeader(rest[4:]) {
			return nil, nil, nil, nil, ErrHeader
		}
		final, rest = rest[4:], nil
	}
	if len(rest) != 0 {
		return nil, nil, nil, nil, ErrHeader
	}
	return k, slots, fixed, final, nil
}

// IsHeader reports whether h parses as an encryption header.
func IsHeader(h []byte) bool {
	_, _, _, _, err := parse(h)
	return err == nil
}

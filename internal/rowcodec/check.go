package rowcodec

import (
	"errors"

	"github.com/snkv-go/snkv/internal/engine"
)

// The checks that go on past a bad row: the integrity check counts the
// rows it reads and names the bad ones, a re-seal skips the rows it cannot
// read. Both read every row through Check, which runs Decode, the read
// sequence of every get and scan, and says what it found: the row's
// verdict, or which check failed.

// Fault is the kind of check a row failed.
type Fault uint8

const (
	// NoFault: the row passed every check.
	NoFault Fault = iota
	// Foreign: a key, value or expiry of the wrong type or length,
	// written by another tool (or damage the checksum cannot name).
	Foreign
	// BadSum: the row's checksum (or its key index row's) is missing,
	// wrong, or not an integer.
	BadSum
	// BadSeal: the value fails authentication (ErrAuth).
	BadSeal
)

// foreignErr marks the ErrCorrupt of a cell of the wrong type or length
// (ScanKey, the expiry, BadValueKind), so that FaultOf can tell it from a
// checksum's.
type foreignErr struct{ error }

func (e foreignErr) Unwrap() error { return e.error }

// foreign marks err (an ErrCorrupt) as a cell of the wrong type or length.
func foreign(err error) error { return foreignErr{err} }

// FaultOf returns the kind of check a row's error (Decode's) is.
func FaultOf(err error) Fault {
	var f foreignErr
	switch {
	case err == nil:
		return NoFault
	case errors.Is(err, engine.ErrAuth):
		return BadSeal
	case errors.As(err, &f):
		return Foreign
	}
	return BadSum
}

// Checked is what Check found in one row.
type Checked struct {
	// Key is the row's key: Decode's, or on a failed check the key cell
	// as stored (for the report; nil when it is not a BLOB).
	Key []byte
	// Value is the value in the clear, as Check's mode says (nil for a
	// read without a value column).
	Value []byte
	// Exp is the expiry in Unix milliseconds; -1: none.
	Exp int64
	// Verdict says, for a row that passed, whether its checksums were
	// verified or it carries none (a version-1 table, another tool's
	// write).
	Verdict Verdict
	// Err is the failed check's error (ErrCorrupt or ErrAuth), and Fault
	// its kind.
	Err   error
	Fault Fault
}

// Check reads and checks the current row of rows with Decode, a scan's
// read of every row whatever its expiry (cols.Key >= 0; the expiry read
// from cols.Expiry and checked against the key index row's checksum when
// cols.Ecrc >= 0), and returns what it found rather than stopping at a
// bad row. The verdict is read off cd.Stats (Decode counts the rows it
// cannot verify there), which must not be shared with a concurrent read.
func (cd *Codec) Check(rows *engine.Rows, cols *Cols, mode Mode, b *Buffers) Checked {
	before := cd.Stats.Unverified.Load()
	var r Checked
	r.Key, r.Value, r.Exp, r.Err = cd.Decode(rows, cols, true, AnyTime, nil, mode, b)
	if r.Err != nil {
		r.Fault = FaultOf(r.Err)
		if key, k := rows.RawBlob(cols.Key); k == engine.KindBlob {
			r.Key = key
		}
		return r
	}
	// A table without the checksum column (version 1) has nothing to
	// verify, and Decode counts nothing for it.
	noSum := !cd.Objects.Crc && cols.Value >= 0
	if noSum || cd.Stats.Unverified.Load() != before {
		r.Verdict = Unverified
	}
	return r
}

// InFormAt reports whether the current row of rows, read through cols
// (key, value as stored, expiry, checksum), is already in the form Encode
// writes (InForm): a conversion passes it by. A cell of the wrong type is
// never in form.
func (cd *Codec) InFormAt(rows *engine.Rows, cols *Cols) bool {
	key, kk := rows.RawBlob(cols.Key)
	stored, vk := rows.RawBlob(cols.Value)
	if kk != engine.KindBlob || vk != engine.KindBlob {
		return false
	}
	r := Row{Key: key, Stored: stored, Exp: -1}
	if rows.Kind(cols.Expiry) != engine.KindNull {
		r.Exp = 0 // only whether there is one counts for the checksum
	}
	crc, kind := rows.IntKind(cols.Crc)
	return cd.InForm(&r, crc, kind)
}

package rowcodec

import (
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/snkv-go/snkv/internal/engine"
)

// The errors of a damaged or foreign row.

// ShowKey is key for an error message: quoted text when it is printable
// UTF-8 ("user:1"), else a blob literal as the sqlite3 shell takes it
// (x'00ff'); cut at 64 bytes.
func ShowKey(key []byte) string {
	const most = 64
	more := ""
	if len(key) > most {
		more = fmt.Sprintf("… (%d bytes)", len(key))
	}
	if printableText(key) {
		n := min(len(key), most)
		for n < len(key) && n > 0 && !utf8.RuneStart(key[n]) {
			n-- // cut between characters
		}
		return strconv.Quote(string(key[:n])) + more
	}
	return fmt.Sprintf("x'%x'", key[:min(len(key), most)]) + more
}

// printableText reports whether b is valid UTF-8 of printable characters
// only.
func printableText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// CorruptRow is the ErrCorrupt of a row of key: what is wrong with it.
func CorruptRow(key []byte, what string) error {
	return fmt.Errorf("%w: key %s: %s", engine.ErrCorrupt, ShowKey(key), what)
}

// BadValueKind is the error of a value stored as another class than BLOB.
func BadValueKind(key []byte, k int) error {
	return foreign(CorruptRow(key, fmt.Sprintf("value is stored as %s, not a BLOB (written by another tool?)", KindName(k))))
}

// KindName is the name of SQLite storage class k, for error messages.
func KindName(k int) string {
	switch k {
	case engine.KindInt:
		return "INTEGER"
	case engine.KindFloat:
		return "REAL"
	case engine.KindText:
		return "TEXT"
	case engine.KindBlob:
		return "BLOB"
	case engine.KindNull:
		return "NULL"
	}
	return fmt.Sprintf("type %d", k)
}

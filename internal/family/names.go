package family

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/layout"
)

// Limits on names, keys and values.
const (
	// MaxNameLen is the longest column family name, in bytes.
	MaxNameLen = 255
	// MaxKeySize is the longest key, in bytes.
	MaxKeySize = layout.MaxKeySize
	// DefaultMaxValueSize is the default limit on a value, in bytes.
	DefaultMaxValueSize = 10 << 20
	// HardMaxValueSize is the largest value limit a store accepts: SQLite's
	// own limit on a blob (1e9 bytes) less room for the row around it.
	HardMaxValueSize = 1_000_000_000 - MaxKeySize - 1024
	// DefaultName is the column family every store has.
	DefaultName = "default"
)

// ValidateName checks a column family name: 1 to 255 bytes of valid UTF-8
// without NUL, not starting with the reserved prefixes "__" or "sqlite_"
// (case-insensitive, as SQLite treats table names).
func ValidateName(name string) error {
	if err := CheckNameBytes("name", name); err != nil {
		return err
	}
	switch {
	case strings.HasPrefix(name, "__"):
		return fmt.Errorf("%w: %q: names starting with \"__\" are reserved", engine.ErrReservedName, name)
	case HasFoldedPrefix(name, "sqlite_"):
		return fmt.Errorf("%w: %q: names starting with \"sqlite_\" are reserved", engine.ErrReservedName, name)
	}
	return nil
}

// FoldName is the registry key of a name: SQLite compares table names
// without regard to ASCII case, so "Users" and "users" are one table; it
// folds no other letter ("Ä" and "ä", "K" and the Kelvin sign are two
// tables), so neither may any comparison of names here (never
// strings.ToLower or strings.EqualFold).
func FoldName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// CheckNameBytes checks the rules every catalogued name follows (what
// names what, for the error message): 1 to MaxNameLen bytes of valid UTF-8
// without NUL.
func CheckNameBytes(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty %s", engine.ErrInvalidName, what)
	case len(name) > MaxNameLen:
		return fmt.Errorf("%w: %s of %d bytes (at most %d)", engine.ErrInvalidName, what, len(name), MaxNameLen)
	case !utf8.ValidString(name):
		return fmt.Errorf("%w: %s is not valid UTF-8", engine.ErrInvalidName, what)
	case strings.IndexByte(name, 0) >= 0:
		return fmt.Errorf("%w: %s contains NUL", engine.ErrInvalidName, what)
	}
	return nil
}

// HasFoldedPrefix reports whether name starts with prefix (lower-case
// ASCII) without regard to ASCII case, as SQLite compares names.
func HasFoldedPrefix(name, prefix string) bool {
	return len(name) >= len(prefix) && FoldName(name[:len(prefix)]) == prefix
}

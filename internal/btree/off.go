//go:build snkv_nofast

package btree

import (
	"github.com/snkv-go/snkv/internal/layout"
	"modernc.org/libc"
)

// Enabled reports whether the fast path is built in: not in this build
// (the tag snkv_nofast), where every write runs its SQL statement.
const Enabled = false

// Conn is the fast path of one connection; in this build it never takes a
// write.
type Conn struct{}

// New returns a fast path that is never used.
func New(*libc.TLS, uintptr) *Conn { return &Conn{} }

// Close does nothing.
func (c *Conn) Close() {}

// Release does nothing: this build keeps no cursor.
func (c *Conn) Release() error { return nil }

// Upsert always reports that the caller must run its SQL statement.
func (c *Conn) Upsert(*layout.Objects, []byte, []byte, int64) (bool, error) { return false, nil }

// Delete always reports that the caller must run its SQL statement.
func (c *Conn) Delete(*layout.Objects, []byte, bool) (ok, found bool, err error) {
	return false, false, nil
}

// PutTTL always reports that the caller must run its SQL statements.
func (c *Conn) PutTTL(*layout.Objects, []byte, []byte, int64, []byte, int64) (bool, error) {
	return false, nil
}

// SetExpiry always reports that the caller must run its SQL statements.
func (c *Conn) SetExpiry(*layout.Objects, []byte, []byte, int64, int64) (ok, found bool, err error) {
	return false, false, nil
}

// Purge always reports that the caller must run its SQL statements.
func (c *Conn) Purge(*layout.Objects, []byte, int) (ok bool, n int, more bool, err error) {
	return false, 0, false, nil
}

// Lookup always reports that the caller must read with SQL.
func (c *Conn) Lookup(*layout.Objects, []byte, bool) (row *ViewRow, ok, found, fresh bool, err error) {
	return nil, false, false, false, nil
}

// Scan is a B-tree scan; this build never opens one.
type Scan struct{}

// OpenScan always reports that the caller must read with SQL.
func (c *Conn) OpenScan(*layout.Objects, []byte, bool, []byte, bool, bool, int) (*Scan, bool, error) {
	return nil, false, nil
}

// Next reports the end.
func (s *Scan) Next() (bool, error) { return false, nil }

// Field is never called: no scan is ever open.
func (s *Scan) Field(int) *Field { return &Field{Kind: KindNull} }

// KeyValue is never called: no scan is ever open.
func (s *Scan) KeyValue() []byte { return nil }

// Row is never called: no scan is ever open.
func (s *Scan) Row() (key, value, kv []byte, crc int64, ok bool) { return nil, nil, nil, 0, false }

// Close does nothing.
func (s *Scan) Close() {}

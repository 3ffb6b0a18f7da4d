//go:build snkv_nofast

package btree

// KeyExpiry is never called: no scan is ever open.
func (s *Scan) KeyExpiry() []byte { return nil }

// KeyIndex is never called: no scan is ever open.
func (s *Scan) KeyIndex() bool { return false }

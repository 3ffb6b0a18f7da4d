//go:build snkv_nofast

package btree

import "github.com/snkv-go/snkv/internal/layout"

// Expired is an entry of a column family's expiry index: the expiry and
// the key it names.
type Expired struct {
	Exp, Key []byte
}

// ExpiredHead always reports that the caller must use SQL.
func (c *Conn) ExpiredHead(_ *layout.Objects, _ []byte, _ int, dst []Expired, buf []byte) (ok bool, ents []Expired, bufOut []byte, more bool, err error) {
	return false, dst[:0], buf[:0], false, nil
}

// PurgeKeys always reports that the caller must use SQL.
func (c *Conn) PurgeKeys(_ *layout.Objects, _ []byte, _ []Expired, gone []Expired) (ok bool, n int, goneOut []Expired, err error) {
	return false, 0, gone[:0], nil
}

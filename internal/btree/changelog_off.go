//go:build snkv_nofast

package btree

// AppendChange always reports that the caller must run its SQL statement.
func (c *Conn) AppendChange(string, int64, *ChangeRow) (bool, error) { return false, nil }

package rowcodec

import (
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/layout"
)

// The key index row: a key with a TTL has one beside its data row, which
// holds the expiry (8 bytes, big-endian Unix milliseconds) and, in a
// format-2 table, a checksum of its own. Decode reads it back
// (readExpiry); every write of one stores what EncodeExpiry returns.

// EncodeExpiry returns what a write stores in the key index row of key,
// in table o, for the expiry expMs: the expiry's 8 bytes and the row's
// checksum, RowSum of the key and those bytes (nil in a table of format
// 1, whose key index has no column for it).
func EncodeExpiry(o *layout.Objects, key []byte, expMs int64) (exp []byte, sum any) {
	exp = expiry.Encode(expMs)
	if !o.V2 {
		return exp, nil
	}
	return exp, RowSum(key, exp)
}

package rowcodec

import (
	"testing"

	"github.com/snkv-go/snkv/internal/layout"
	"github.com/stretchr/testify/require"
)

// A key index row's checksum follows its table's layout: none in a
// version-1 key index (a table of format 1, or one part way through
// Upgrade), RowSum of the key and the stored expiry in format 2.
func TestEncodeExpiryFollowsLayout(t *testing.T) {
	k := []byte("k")
	for _, c := range []struct{ crc, v2 bool }{{false, false}, {true, false}} {
		o := layout.For("t", c.crc, c.v2)
		exp, sum := EncodeExpiry(&o, k, 1234)
		require.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0x04, 0xd2}, exp)
		require.Nil(t, sum, "a version-1 key index has no checksum")
	}
	o := layout.For("t", true, true)
	exp, sum := EncodeExpiry(&o, k, 1234)
	require.Equal(t, RowSum(k, exp), sum)
}

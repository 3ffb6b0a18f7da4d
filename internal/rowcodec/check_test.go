package rowcodec

import (
	"testing"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/stretchr/testify/require"
)

func TestFaultOfNamesTheFailedCheck(t *testing.T) {
	key := []byte("k")
	_, keyErr := ScanKey([]byte{}, engine.KindBlob)
	_, kindErr := ScanKey(key, engine.KindText)
	_, sumErr := CheckSumOf(1, engine.KindInt, key, 2, "row", true)
	_, nullErr := CheckSumOf(0, engine.KindNull, key, 2, "row", true)
	for _, c := range []struct {
		err  error
		want Fault
	}{
		{nil, NoFault},
		{keyErr, Foreign},
		{kindErr, Foreign},
		{BadValueKind(key, engine.KindInt), Foreign},
		{sumErr, BadSum},
		{nullErr, BadSum},
		{AuthErr(key, "forged"), BadSeal},
	} {
		require.Equal(t, c.want, FaultOf(c.err), "%v", c.err)
		if c.err != nil && c.want != BadSeal {
			require.ErrorIs(t, c.err, engine.ErrCorrupt, "a marked error is still ErrCorrupt")
		}
	}
}

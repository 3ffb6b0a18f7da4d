package main

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTSVRoundTrip writes random keys and values (every byte value, UTF-8
// and not) as TSV lines and reads them back exactly; a line never holds a
// raw tab, newline or carriage return inside a field.
func TestTSVRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	pick := []byte("ab\\\t\n\r\x00\x7f\xff\xc3\xa9\xe2\x80\xae x")
	for range 2000 {
		gen := func() []byte {
			b := make([]byte, rng.IntN(12))
			for i := range b {
				if rng.IntN(3) == 0 {
					b[i] = byte(rng.IntN(256))
				} else {
					b[i] = pick[rng.IntN(len(pick))]
				}
			}
			return b
		}
		key, value := gen(), gen()
		var exp *int64
		if rng.IntN(2) == 0 {
			ms := rng.Int64()
			exp = &ms
		}
		line := appendTSV(nil, key, value, exp)
		require.Equal(t, 1, bytes.Count(line, []byte("\n")))
		require.False(t, bytes.Contains(line, []byte("\r")))
		gotK, gotV, gotE, err := parseTSV(bytes.TrimSuffix(line, []byte("\n")))
		require.NoError(t, err, "%q", line)
		require.Equal(t, key, append([]byte{}, gotK...), "%q", line)
		require.Equal(t, value, append([]byte{}, gotV...), "%q", line)
		require.Equal(t, exp, gotE)
	}
	for _, bad := range []string{"k", "k\tv\tx", "k\tv\t1\t2", "k\\", "k\\q\tv", "k\\x4\tv", "k\\xzz\tv"} {
		_, _, _, err := parseTSV([]byte(bad))
		require.Error(t, err, "%q", bad)
	}
}

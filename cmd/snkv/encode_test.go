package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestJSONBase64WhenShorter writes a key or value that is valid UTF-8 as
// a string only when that is not longer than its base64: a zero-filled
// value of 1 MiB was a line of 6 MiB of \u0000, and is now one of 1.33
// MiB; text stays text. Both forms import back to the same bytes.
func TestJSONBase64WhenShorter(t *testing.T) {
	for _, c := range []struct {
		name, value string
		base64      bool
	}{
		{"text", "plain text with a \"quote\" and a \\", false},
		{"utf-8", "naïve café ☕", false},
		{"one control", "line\nbreak", false},
		{"zeros", strings.Repeat("\x00", 1<<20), true},
		{"controls", "\x01\x02tab\there", true},
		{"quotes", strings.Repeat(`"`, 300), true},
		{"empty", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			text, b64 := textOrBase64([]byte(c.value))
			require.Equal(t, c.base64, b64 != nil, "base64 chosen")
			require.Equal(t, !c.base64, text != nil, "text chosen")
			line, err := json.Marshal(newRecord("cf", []byte("k"), []byte(c.value)))
			require.NoError(t, err)
			require.LessOrEqual(t, len(line), len(`{"cf":"cf","key":"k","value_base64":""}`)+(len(c.value)+2)/3*4, "never longer than base64")
		})
	}

	// jsonEscapedLen is the length encoding/json gives the string.
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []rune{'a', 'é', '"', '\\', '\n', '\r', '\t', 0, 1, 0x1f, 0x7f, '<', '&', 0x2028, 0x2029, '☕', 0x10ffff}
	for range 2000 {
		var sb strings.Builder
		for range rng.IntN(12) {
			sb.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		q, err := jsonString(sb.String())
		require.NoError(t, err)
		require.Equal(t, len(q)-2, jsonEscapedLen([]byte(sb.String())), "%q", sb.String())
	}

	path := filepath.Join(t.TempDir(), "zeros.db")
	zeros := bytes.Repeat([]byte{0}, 1<<20)
	r := cli(t, bytes.NewReader(zeros), "put", path, "--create", "z", "-")
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "export", path)
	require.Equal(t, 0, r.code, r.stderr)
	require.Less(t, len(r.stdout), 1<<20*4/3+100, "the export line of 1 MiB of zeros is base64")
	dst := filepath.Join(t.TempDir(), "copy.db")
	r = cli(t, strings.NewReader(r.stdout), "import", dst, "--create")
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "get", dst, "z")
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, r.stdout == string(zeros), "the zeros come back")
}

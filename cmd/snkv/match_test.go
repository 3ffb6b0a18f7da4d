package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMatchGlob(t *testing.T) {
	for _, c := range []struct {
		pattern, key string
		want         bool
	}{
		{"*", "", true},
		{"*", "anything", true},
		{"user:*", "user:1", true},
		{"user:*", "use", false},
		{"user:?", "user:1", true},
		{"user:?", "user:12", false},
		{"*:1", "user:1", true},
		{"*:1", "user:10", false},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"h[ae]llo", "hello", true},
		{"h[ae]llo", "hillo", false},
		{"h[^e]llo", "hallo", true},
		{"h[^e]llo", "hello", false},
		{"h[a-c]llo", "hbllo", true},
		{"h[a-c]llo", "hdllo", false},
		{`h\*llo`, "h*llo", true},
		{`h\*llo`, "hallo", false},
		{"na?ve", "naïve", true}, // '?' is one character, not one byte
		{"caf?", "caf\xff", true},
		{"caf\xff", "caf\xff", true},
		{"caf\xff", "caf\xfe", false},
		{"[ï]", "ï", true},
		{"x[", "x[", true},
	} {
		require.Equal(t, c.want, matchGlob([]byte(c.pattern), []byte(c.key)), "%q ~ %q", c.pattern, c.key)
	}
	require.Equal(t, "user:", string(globPrefix([]byte("user:*"))))
	require.Equal(t, "a*b", string(globPrefix([]byte(`a\*b?`))))
	require.Equal(t, "", string(globPrefix([]byte("*x"))))
}

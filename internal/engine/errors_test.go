package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every SQLite result code snkv gives meaning to maps to its sentinel,
// extended codes included, and keeps the driver's error in the chain.
func TestWrapMapsResultCodes(t *testing.T) {
	cases := []struct {
		code int
		want error
	}{
		{5, ErrBusy}, {5 | 1<<8, ErrBusy}, {6, ErrBusy},
		{8, ErrReadOnly},
		{10, ErrIO}, {10 | 3<<8, ErrIO}, {10 | 33<<8, ErrIO}, // IOERR, _WRITE, _IN_PAGE
		{11, ErrCorrupt}, {26, ErrCorrupt},
		{13, ErrDiskFull},
		{14, ErrCantOpen},
	}
	for _, c := range cases {
		cause := &Error{code: c.code, msg: "sqlite says no"}
		err := Wrap(context.Background(), "op", cause)
		require.ErrorIs(t, err, c.want, "code %d", c.code)
		var e *Error
		require.True(t, errors.As(err, &e), "code %d keeps the driver error", c.code)
		require.Equal(t, c.code, e.code)
	}
	require.NotErrorIs(t, Wrap(context.Background(), "op", &Error{code: 1, msg: "syntax error"}), ErrIO)
}

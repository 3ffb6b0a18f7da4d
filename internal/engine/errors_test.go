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

// "No such table" is damage at this layer (the column family layer alone
// tells a dropped column family from it), whichever code SQLite gives it;
// SQLITE_SCHEMA that outlasted every retry is contention.
func TestWrapMissingTableAndSchema(t *testing.T) {
	for _, code := range []int{1, 17} {
		cause := &Error{code: code, msg: "SQL logic error: no such table: main.__snkv_view__x (1)"}
		require.True(t, NoSuchTable(cause))
		err := Wrap(context.Background(), "get", cause)
		require.ErrorIs(t, err, ErrCorrupt, "code %d", code)
		require.NotErrorIs(t, err, ErrNotFound, "code %d", code)
		require.Contains(t, err.Error(), `"__snkv_view__x" is missing`)
		require.Contains(t, err.Error(), "Repair")
		var e *Error
		require.True(t, errors.As(err, &e))
	}
	err := Wrap(context.Background(), "get", &Error{code: 17, msg: "database schema has changed (17)"})
	require.ErrorIs(t, err, ErrBusy)
	require.False(t, NoSuchTable(&Error{code: 17, msg: "database schema has changed (17)"}))
}

package btree

import "fmt"

// Error is a failure of a fast-path call, with SQLite's result code: the
// caller maps it as it maps the errors of its SQL statements.
type Error struct {
	Code int
}

func (e *Error) Error() string {
	return fmt.Sprintf("btree write failed (SQLite result code %d)", e.Code)
}

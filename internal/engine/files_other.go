//go:build !unix

package engine

// dirReadOnly is never true where the file system cannot be asked: a
// read-only open there is a plain SQLite read-only open.
func dirReadOnly(string) bool { return false }

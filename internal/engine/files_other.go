//go:build !unix

package engine

import "os"

// dirReadOnly is never true where the file system cannot be asked: a
// read-only open there is a plain SQLite read-only open.
func dirReadOnly(string) bool { return false }

// writable is true where the file system cannot be asked: SQLite's own
// error then stands.
func writable(string) bool { return true }

// writeDenied is false where the file system cannot be asked: SQLite's
// own error then stands.
func writeDenied(string) bool { return false }

// processAlive is true where it cannot be asked: nothing is swept.
func processAlive(int) bool { return true }

// ownedByUs is false where ownership cannot be asked: files are left as
// SQLite made them.
func ownedByUs(os.FileInfo) bool { return false }

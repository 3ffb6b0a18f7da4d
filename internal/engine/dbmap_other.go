//go:build !linux

package engine

import "sync/atomic"

// dbKept counts the unmaps of a whole database file skipped (none here:
// walMapSupported is false, and database files keep the default methods).
var dbKept atomic.Uint64

func dbMappingCurrent(uintptr) bool { return false }

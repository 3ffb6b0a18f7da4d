//go:build unix

package engine

import (
	"errors"
	"path/filepath"
	"syscall"
)

// dirReadOnly reports whether the directory of path is on a read-only
// file system (EROFS: even root cannot write there).
func dirReadOnly(path string) bool {
	const wOK = 2
	err := syscall.Access(filepath.Dir(path), wOK)
	return errors.Is(err, syscall.EROFS)
}

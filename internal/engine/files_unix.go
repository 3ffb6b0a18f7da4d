//go:build unix

package engine

import (
	"errors"
	"os"
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

// writable reports whether this process may open path for writing (root
// may write any file).
func writable(path string) bool {
	const wOK = 2
	return syscall.Access(path, wOK) == nil
}

// writeDenied reports whether path exists and this process may not open
// it for writing. Unlike !writable, it is false for a file that does not
// exist (any more: another process may have removed it meanwhile).
func writeDenied(path string) bool {
	const wOK = 2
	err := syscall.Access(path, wOK)
	return err != nil && !errors.Is(err, syscall.ENOENT)
}

// processAlive reports whether a process with the id pid exists (it may
// belong to another user).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// ownedByUs reports whether the file st describes belongs to this
// process's effective user.
func ownedByUs(st os.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == os.Geteuid()
}

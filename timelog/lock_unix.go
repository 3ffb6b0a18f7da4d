//go:build linux || darwin || android || freebsd || netbsd || openbsd || dragonfly

package timelog

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on f without waiting. flock locks
// belong to the open file, so a second open of the same file conflicts
// even inside one process; the kernel drops the lock when the process dies.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

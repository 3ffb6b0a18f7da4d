//go:build unix

package main

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"
)

// writable reports whether this process may write the file at path,
// asking the kernel (access(2), which also knows read-only file systems
// and root's rights) without opening the file.
func writable(path string) error {
	err := unix.Access(path, unix.W_OK)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return fs.ErrPermission
	case errors.Is(err, unix.EROFS):
		return errors.New("the file system is read-only")
	}
	return err
}

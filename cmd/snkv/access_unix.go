//go:build unix

package main

import (
	"errors"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"

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

// ownedByOther names the owner of the file at path when it is not this
// process's user ("root"), for a message that says whom to ask; "" when
// this user owns it or it cannot be told.
func ownedByOther(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) == os.Getuid() {
		return ""
	}
	id := strconv.FormatUint(uint64(st.Uid), 10)
	if u, err := user.LookupId(id); err == nil {
		return u.Username
	}
	return "uid " + id
}

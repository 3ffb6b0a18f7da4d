package engine

import "syscall"

// tmpfsMagic is the file-system type statfs reports for tmpfs.
const tmpfsMagic = 0x01021994

// memoryFS reports whether dir is a writable tmpfs with at least minFree
// bytes free.
func memoryFS(dir string, minFree uint64) bool {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil || st.Type != tmpfsMagic {
		return false
	}
	return st.Bavail*uint64(st.Bsize) >= minFree && writable(dir)
}

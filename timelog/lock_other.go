//go:build !(linux || darwin || android || freebsd || netbsd || openbsd || dragonfly || windows)

package timelog

import "os"

// lockFile: on platforms without flock or LockFileEx only the in-process
// registry guards the log.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) error { return nil }

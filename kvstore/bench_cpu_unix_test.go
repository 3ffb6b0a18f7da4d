//go:build unix

package kvstore_test

import "syscall"

// cpuNanos returns the CPU time (user and system) this process has used,
// in nanoseconds; 0 if the system does not say.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

//go:build unix

package timelog_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) the process has used so
// far; benchmarks report it beside wall time, which a busy machine
// inflates.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

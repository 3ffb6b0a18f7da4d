//go:build linux

package changelog

import (
	"errors"
	"syscall"
	"time"
)

// sleepShort sleeps for d, a fraction of a millisecond, in the kernel:
// the runtime's timers wake a process with nothing else to do no sooner
// than a millisecond later (its poller waits in whole milliseconds). The
// goroutine holds a thread for d (the runtime hands its processor to
// another thread meanwhile).
func sleepShort(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var left syscall.Timespec
		err := syscall.Nanosleep(&ts, &left)
		if !errors.Is(err, syscall.EINTR) {
			return
		}
		ts = left
	}
}

//go:build !linux

package changelog

import "time"

// sleepShort sleeps for d (see sleep_linux.go).
func sleepShort(d time.Duration) { time.Sleep(d) }

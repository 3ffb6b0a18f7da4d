//go:build !unix

package kvstore_test

// cpuNanos is not measured on this platform.
func cpuNanos() int64 { return 0 }

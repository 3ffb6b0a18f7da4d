//go:build !unix

package timelog_test

import "time"

// cpuTime is not measured on this platform: benchmarks report 0.
func cpuTime() time.Duration { return 0 }

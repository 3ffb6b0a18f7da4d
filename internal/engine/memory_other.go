//go:build !linux

package engine

// memoryFS is false off Linux: in-memory stores live in os.TempDir().
func memoryFS(string, uint64) bool { return false }

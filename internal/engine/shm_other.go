//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package engine

// mapShm is not available on this platform: read transactions are never
// kept open between calls here (see snapshot.go).
func mapShm(*Conn) (*shmView, error) { return nil, errNoShm }

package kvstore

import "sync"

// RecordHeaders records every encryption header the stores of this process
// write from now on, for tests that search the files for them; stop ends
// the recording.
func RecordHeaders() (written func() [][]byte, stop func()) {
	var mu sync.Mutex
	var hs [][]byte
	f := func(h []byte) {
		mu.Lock()
		defer mu.Unlock()
		hs = append(hs, append([]byte(nil), h...))
	}
	headerWritten.Store(&f)
	written = func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		return append([][]byte(nil), hs...)
	}
	return written, func() { headerWritten.Store(nil) }
}

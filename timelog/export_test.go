package timelog

// SetFailCommit makes the log's own flush and compaction commits fail with
// the error f returns (nil: commit normally).
func SetFailCommit(f func() error) {
	if f == nil {
		testFailCommit.Store(nil)
		return
	}
	testFailCommit.Store(&f)
}

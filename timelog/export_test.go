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

// SetConvertChunk makes the conversion of an old values table read rows
// old rows a chunk (0: the default) and call after, if not nil, once each
// chunk is written; an error from after aborts the conversion. The reset
// function restores the defaults.
func SetConvertChunk(rows int, after func() error) (reset func()) {
	testConvertChunk.rows, testConvertChunk.after = rows, after
	return func() { testConvertChunk.rows, testConvertChunk.after = 0, nil }
}

package engine

// Follows reports whether m is the mark of the one commit after prev's:
// the WAL-index header's change counter, which SQLite increments by one
// at every commit (and at nothing else while the index is in use), moved
// by exactly one between them. A holder of prev that knows its own
// transaction committed in between learns that no other did.
func (m CommitMark) Follows(prev CommitMark) bool {
	return m.h[2] == prev.h[2]+1
}

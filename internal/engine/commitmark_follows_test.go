package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// Follows tells the mark of the next commit from one with a commit or
// more in between.
func TestCommitMarkFollows(t *testing.T) {
	db := holdDB(t, 0)
	readV(t, db, 1) // maps the WAL index
	put := func(k int) {
		withWriter(t, db, func(c *Conn) {
			_, err := c.Exec(context.Background(), "INSERT INTO t (k, v) VALUES (?, 1)", k)
			require.NoError(t, err)
		})
	}
	m0, ok := db.CommitMark()
	require.True(t, ok)
	put(1)
	m1, ok := db.CommitMark()
	require.True(t, ok)
	require.True(t, m1.Follows(m0))
	require.False(t, m0.Follows(m0), "nothing committed")
	put(2)
	m2, ok := db.CommitMark()
	require.True(t, ok)
	require.True(t, m2.Follows(m1))
	require.False(t, m2.Follows(m0), "two commits in between")
}

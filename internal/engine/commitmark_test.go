package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// Without held reads (ReadHold 0) the commit mark still works: a tailing
// change feed reader waits on it, and without it polls the log with a read
// transaction every few milliseconds. No read transaction is kept.
func TestCommitMarkWithoutReadHold(t *testing.T) {
	db := holdDB(t, 0)
	_, found := readV(t, db, 1)
	require.False(t, found)
	before, ok := db.CommitMark()
	require.True(t, ok, "the commit mark is readable after a read")
	again, ok := db.CommitMark()
	require.True(t, ok)
	require.Equal(t, before, again, "nothing committed")
	withWriter(t, db, func(c *Conn) {
		_, err := c.Exec(context.Background(), "INSERT INTO t (k, v) VALUES (1, 1)")
		require.NoError(t, err)
	})
	after, ok := db.CommitMark()
	require.True(t, ok)
	require.NotEqual(t, before, after, "a commit changes the mark")
	for range 3 {
		v, found := readV(t, db, 1)
		require.True(t, found)
		require.EqualValues(t, 1, v)
	}
	require.Zero(t, db.Stats.HeldReads.Load(), "no read transaction is held")
	c, err := db.AcquireSnapshot(context.Background(), ReadPoint)
	require.NoError(t, err)
	require.False(t, c.inTx(), "a point read runs outside a transaction")
	db.ReleaseSnapshot(c)
	c, err = db.AcquireSnapshot(context.Background(), ReadMulti)
	require.NoError(t, err)
	_, err = c.Exec(context.Background(), "SELECT 1 FROM t")
	require.NoError(t, err)
	db.ReleaseSnapshot(c)
	require.False(t, c.inTx(), "a multi-statement read's transaction ends with it")
}

package changelog

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/engine"
)

// Publish extends the window only with the changes of the one commit
// after the window's state, starting right after its last change: after
// two commits (another transaction committed before the publishing one
// looked at the mark), with changes the window holds already, or twice,
// it changes nothing and the readers read the file as before. A read
// after a publication is served without a refresh.
func TestPublishOnlyTheNextCommit(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	setup(t, db)
	put := func(k string) {
		fill(t, db, Change{CF: "x", Op: OpPut, Key: []byte(k), Value: []byte("v"), ExpiryMs: NoExpiry})
	}
	logged := func(from int64) []Change {
		var chs []Change
		require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
			var err error
			chs, err = Read(ctx, c, from, 100)
			return err
		}))
		return chs
	}
	put("a")
	c, err := db.AcquireSnapshot(ctx, engine.ReadPinned) // maps the WAL index
	require.NoError(t, err)
	db.ReleaseSnapshot(c)
	var pc PageCache
	var n Notifier
	open := func(context.Context, *engine.Conn, []Change) error { return nil }
	read := func() CacheRead {
		cr, err := pc.Read(ctx, db, &n, open, Position{Seq: 1}, Filter{}.Matcher(), 100, 0)
		require.NoError(t, err)
		require.True(t, cr.OK)
		return cr
	}
	require.Len(t, read().Chs, 1)

	put("b")
	put("c")
	require.False(t, pc.Publish(db, &n, logged(2)[:1], 2), "two commits since the window")
	require.Len(t, read().Chs, 3, "refreshed through SQL")

	put("d")
	require.False(t, pc.Publish(db, &n, logged(3), 4), "changes the window holds")
	d := logged(4)
	require.True(t, pc.Publish(db, &n, d, 2))
	require.False(t, pc.Publish(db, &n, d, 2), "nothing committed since the window")
	fills := pc.Fills()
	cr := read()
	require.Equal(t, fills, pc.Fills(), "no refresh")
	require.Equal(t, logged(1), cr.Chs)
	require.Equal(t, int64(5), cr.Next)
}

package timelog_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

// The store's integrity check runs timelog's, registered as vector's is:
// a sound log adds nothing, a page that does not decode and a log that lost
// a table are each a problem naming the log, and Store.IntegrityCheck
// fails with ErrCorrupt.
func TestStoreIntegrityCheckRunsTimelogs(t *testing.T) {
	ctx := context.Background()
	db, _ := openStore(t)
	l := openLog(t, db, "bad", manual(timelog.Options{}))
	require.NoError(t, l.AppendBatch([]timelog.Record{{Ts: 1, Handle: 1}, {Ts: 2, Handle: 2}}))
	require.NoError(t, l.Flush(ctx))
	other := openLog(t, db, "gone", manual(timelog.Options{}))
	require.NoError(t, other.Close())

	rep, err := db.CheckIntegrity(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Problems, "sound logs")

	pages, err := layer.OpenHiddenTable(ctx, db, "timelog", "bad/pages")
	require.NoError(t, err)
	var key []byte
	for e, err := range pages.All() {
		require.NoError(t, err)
		key = append([]byte(nil), e.Key...)
		break
	}
	require.NotNil(t, key, "a flushed page")
	require.NoError(t, pages.Put(key, []byte("not a page")))
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		return layer.DropHiddenTable(tx, "timelog", "gone/tombs")
	}))

	rep, err = db.CheckIntegrity(ctx)
	require.NoError(t, err)
	require.Len(t, rep.Problems, 2, "%q", rep.Problems)
	require.Contains(t, rep.Problems[0], `"bad"`)
	require.Contains(t, rep.Problems[1], `"gone"`)
	require.True(t, strings.Contains(rep.Problems[1], "missing table"), rep.Problems[1])
	require.ErrorIs(t, db.IntegrityCheck(ctx), kvstore.ErrCorrupt)
}

package expiry_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/stretchr/testify/require"
)

// ttlTable opens a file holding column family "t" in the layout v2 says,
// with its TTL tables, and returns its objects.
func ttlTable(t *testing.T, v2 bool) (*engine.DB, *layout.Objects) {
	t.Helper()
	db, err := engine.Open(engine.Config{Path: filepath.Join(t.TempDir(), "f.db"), Journal: "WAL", Sync: "NORMAL", BusyTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	o := layout.For("t", v2, v2)
	ctx := context.Background()
	require.NoError(t, db.WithWriter(ctx, func(c *engine.Conn) error {
		on, err := expiry.Enabled(ctx, c, &o)
		require.NoError(t, err)
		require.False(t, on, "no TTL tables yet")
		q := []string{o.V1DataTableSQL(), o.PlainViewSQL()}
		if v2 {
			q = []string{o.DataTableSQL(), o.ChecksumTriggerSQL(), o.PlainViewSQL()}
		}
		for _, s := range append(q, o.EnableSQL()...) {
			if err := c.ExecScript(ctx, s); err != nil {
				return err
			}
		}
		return nil
	}))
	return db, &o
}

// put writes key with expiry expMs (-1: none) through SQL, as the
// column family's statements do.
func put(t *testing.T, db *engine.DB, o *layout.Objects, key string, expMs int64) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, db.WithWriter(ctx, func(c *engine.Conn) error {
		if _, err := c.Exec(ctx, `INSERT INTO `+o.Quoted.Data+` (key, value) VALUES (?1, ?2)`, []byte(key), []byte("v")); err != nil {
			return err
		}
		if expMs < 0 {
			return nil
		}
		if _, err := c.Exec(ctx, o.SetKeySQL(), []byte(key), expiry.Encode(expMs), int64(0)); err != nil {
			return err
		}
		_, err := c.Exec(ctx, o.SetIndexSQL(), expiry.IndexArgs(o, expMs, []byte(key))...)
		return err
	}))
}

func count(t *testing.T, db *engine.DB, table string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, db.WithReader(context.Background(), func(c *engine.Conn) (err error) {
		n, err = c.QueryInt(context.Background(), `SELECT count(*) FROM `+layout.Quote(table))
		return err
	}))
	return n
}

// PurgeOnce removes the expired keys, oldest expiry first, up to its limit,
// with their index rows, and leaves live and permanent keys; Purge goes on
// in batches until none is left. Both layouts.
func TestPurge(t *testing.T) {
	for _, v2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("v2=%v", v2), func(t *testing.T) {
			db, o := ttlTable(t, v2)
			ctx := context.Background()
			const now = int64(1_700_000_000_000)
			for i := range 5 {
				put(t, db, o, fmt.Sprintf("old%d", i), now-int64(5-i)) // expired, oldest first
			}
			put(t, db, o, "live", now+1000)
			put(t, db, o, "forever", -1)
			require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
				on, err := expiry.EnabledWhole(ctx, c, o)
				require.NoError(t, err)
				require.True(t, on)
				n, err := expiry.CountExpired(ctx, c, o, now)
				require.NoError(t, err)
				require.EqualValues(t, 5, n)
				problems, err := expiry.Check(ctx, c, o)
				require.NoError(t, err)
				require.Empty(t, problems)
				return nil
			}))

			tx, err := db.Begin(ctx, true)
			require.NoError(t, err)
			n, more, err := expiry.PurgeOnce(tx.Ctx(), tx.Conn(), o, now, 2)
			require.NoError(t, err)
			require.NoError(t, tx.Commit())
			require.Equal(t, 2, n)
			require.True(t, more, "the limit stopped it")
			require.EqualValues(t, 5, count(t, db, o.Data))

			clock := clockAt(time.UnixMilli(now))
			total, err := expiry.Purge(ctx, db, o, clock, 0, nil, nil)
			require.NoError(t, err)
			require.Equal(t, 3, total)
			require.EqualValues(t, 2, count(t, db, o.Data), "live and forever stay")
			require.EqualValues(t, 1, count(t, db, o.Keys))
			require.EqualValues(t, 1, count(t, db, o.Expiry))
			total, err = expiry.Purge(ctx, db, o, clock, 0, nil, nil)
			require.NoError(t, err)
			require.Zero(t, total)
		})
	}
}

// Check reports a key index row without its expiry index row; EnabledWhole
// reports a key index dropped beside its expiry index as damage.
func TestCheckAndEnabledWhole(t *testing.T) {
	db, o := ttlTable(t, true)
	ctx := context.Background()
	put(t, db, o, "k", 1_700_000_000_000)
	require.NoError(t, db.WithWriter(ctx, func(c *engine.Conn) error {
		_, err := c.Exec(ctx, `DELETE FROM `+o.Quoted.Expiry)
		return err
	}))
	require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
		problems, err := expiry.Check(ctx, c, o)
		require.NoError(t, err)
		require.Equal(t, []string{`column family "t": 1 key index rows without their expiry index row`}, problems)
		return nil
	}))
	require.NoError(t, db.WithWriter(ctx, func(c *engine.Conn) error {
		return c.ExecScript(ctx, `DROP TABLE `+o.Quoted.Keys)
	}))
	require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
		on, err := expiry.Enabled(ctx, c, o)
		require.NoError(t, err)
		require.False(t, on)
		_, err = expiry.EnabledWhole(ctx, c, o)
		require.ErrorIs(t, err, engine.ErrCorrupt)
		return nil
	}))
}

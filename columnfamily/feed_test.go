package columnfamily_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/columnfamily"
	"github.com/snkv-go/snkv/internal/catalog"
	"github.com/snkv-go/snkv/internal/changelog"
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/family"
	"github.com/snkv-go/snkv/ttl"
)

// fedStore is a registry on path with the change feed's recording state,
// opened as kvstore.Open opens one.
type fedStore struct {
	reg *catalog.Registry
	db  *engine.DB
	fs  *changelog.Feeds
}

func openFed(t *testing.T, path string) *fedStore {
	t.Helper()
	db, err := engine.Open(engine.Config{Path: path, Journal: "WAL", Sync: "NORMAL", BusyTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	clock := ttl.NewManualClock(time.Unix(1_700_000_000, 0))
	env := &family.Env{DB: db, Clock: clock, MaxValueSize: family.DefaultMaxValueSize}
	env.Feeds = changelog.NewFeeds(func() int64 { return expiry.NowMs(clock) })
	r := catalog.NewRegistry(env)
	require.NoError(t, r.Init(context.Background(), false))
	return &fedStore{reg: r, db: db, fs: env.Feeds}
}

// enable turns cf's feed on, as changefeed.Enable does.
func (s *fedStore) enable(t *testing.T, cf string) {
	t.Helper()
	tx, err := s.db.Begin(context.Background(), true)
	require.NoError(t, err)
	require.NoError(t, s.fs.SetFeed(context.Background(), tx, changelog.Config{CF: cf}, 1))
	require.NoError(t, tx.Commit())
}

// logOps reads the whole change log as "op key".
func (s *fedStore) logOps(t *testing.T) []string {
	t.Helper()
	var out []string
	require.NoError(t, s.db.WithReader(context.Background(), func(c *engine.Conn) error {
		chs, err := changelog.Read(context.Background(), c, 1, 1000)
		for _, ch := range chs {
			out = append(out, ch.Op.String()+" "+string(ch.Key))
		}
		return err
	}))
	return out
}

// A lone Put or Delete whose column family gets a feed from another handle
// on the file (as another process would) after the call looked for one and
// before its write is recorded all the same: the check is part of the
// write.
func TestLoneWriteRacingEnableElsewhereIsRecorded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(cf *columnfamily.ColumnFamily) error
		want  string
	}{
		{"put", func(cf *columnfamily.ColumnFamily) error { return cf.Put(b("k1"), b("v")) }, "put k1"},
		{"delete", func(cf *columnfamily.ColumnFamily) error { return cf.Delete(b("k0")) }, "delete k0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "race.db")
			s := openFed(t, path)
			f, err := s.reg.Create(context.Background(), "users")
			require.NoError(t, err)
			cf := family.NewHandle(f).(*columnfamily.ColumnFamily)
			require.NoError(t, cf.Put(b("k0"), b("v"))) // the feeds are loaded: none
			s2 := openFed(t, path)

			enabled := false
			defer columnfamily.SetAloneHook(func() {
				if !enabled {
					enabled = true
					s2.enable(t, "users")
				}
			})()
			require.NoError(t, tc.write(cf))
			require.True(t, enabled, "the hook ran")
			require.Equal(t, []string{tc.want}, s2.logOps(t))

			// The next lone writes see the feed at once.
			require.NoError(t, cf.Put(b("k2"), b("v")))
			require.NoError(t, cf.Delete(b("k2")))
			require.Equal(t, []string{tc.want, "put k2", "delete k2"}, s2.logOps(t))
		})
	}
}

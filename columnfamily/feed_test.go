package columnfamily_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/columnfamily"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// feedOps reads every change of s's feed from the oldest, as "op key".
func feedOps(t *testing.T, s *kvstore.Store) []string {
	t.Helper()
	ctx := context.Background()
	r, err := changefeed.NewReader(ctx, s, changefeed.Position{}, changefeed.ReaderOptions{})
	require.NoError(t, err)
	var out []string
	for {
		chs, err := r.Read(ctx)
		require.NoError(t, err)
		if len(chs) == 0 {
			return out
		}
		for _, c := range chs {
			out = append(out, c.Op.String()+" "+string(c.Key))
		}
	}
}

// A lone Put or Delete whose column family gets a feed from another handle
// on the file (as another process would) after the call looked for one and
// before its write is recorded all the same: the check is part of the
// write.
func TestLoneWriteRacingEnableElsewhereIsRecorded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(s *kvstore.Store) error
		want  string
	}{
		{"put", func(s *kvstore.Store) error { return s.Put([]byte("k1"), []byte("v")) }, "put k1"},
		{"delete", func(s *kvstore.Store) error { return s.Delete([]byte("k0")) }, "delete k0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "race.db")
			s, err := kvstore.Open(path, kvstore.Options{})
			require.NoError(t, err)
			defer s.Close()
			require.NoError(t, s.Put([]byte("k0"), []byte("v"))) // the feeds are loaded: none
			s2, err := kvstore.Open(path, kvstore.Options{})
			require.NoError(t, err)
			defer s2.Close()

			enabled := false
			defer columnfamily.SetAloneHook(func() {
				if !enabled {
					enabled = true
					require.NoError(t, changefeed.Enable(ctx, s2, "default", changefeed.Options{}))
				}
			})()
			require.NoError(t, tc.write(s))
			require.True(t, enabled, "the hook ran")
			require.Equal(t, []string{tc.want}, feedOps(t, s2))

			// The next lone writes see the feed at once.
			require.NoError(t, s.Put([]byte("k2"), []byte("v")))
			require.NoError(t, s.Delete([]byte("k2")))
			require.Equal(t, []string{tc.want, "put k2", "delete k2"}, feedOps(t, s2))
		})
	}
}

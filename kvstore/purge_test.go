package kvstore_test

import (
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// A store reclaims expired keys by itself unless told not to: with the
// system clock its background purge runs every DefaultPurgeInterval, file
// and in-memory stores alike; -1 turns it off; a store on an injected clock
// (a test's ManualClock) purges in the background only when asked to; a
// read-only store never does. Before, nothing was reclaimed unless
// PurgeInterval was set. (TestPurgeExpiredBackground proves what a running
// purge does.)
func TestBackgroundPurgeByDefault(t *testing.T) {
	clk := kvstore.NewManualClock(time.Unix(1_700_000_000, 0))
	path := tempPath(t)
	for _, c := range []struct {
		name string
		path string
		opts kvstore.Options
		want time.Duration
	}{
		{"zero options", path, kvstore.Options{}, kvstore.DefaultPurgeInterval},
		{"in memory", "", kvstore.Options{}, kvstore.DefaultPurgeInterval},
		{"an interval", path, kvstore.Options{PurgeInterval: time.Second}, time.Second},
		{"off", path, kvstore.Options{PurgeInterval: -1}, 0},
		{"injected clock", path, kvstore.Options{Clock: clk}, 0},
		{"injected clock and an interval", path, kvstore.Options{Clock: clk, PurgeInterval: time.Hour}, time.Hour},
		{"read-only", path, kvstore.Options{ReadOnly: true}, 0},
		{"read-only with an interval", path, kvstore.Options{ReadOnly: true, PurgeInterval: time.Second}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openAt(t, c.path, c.opts)
			require.Equal(t, c.want, kvstore.PurgeEvery(db))
			require.NoError(t, db.Close())
		})
	}
	_, err := kvstore.Open(path, kvstore.Options{PurgeInterval: -2})
	require.ErrorIs(t, err, kvstore.ErrInvalidOption)
}

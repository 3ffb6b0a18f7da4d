package changefeed_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/kvstore"
	_ "modernc.org/sqlite" // database/sql driver, to write an older feeds table
)

// Retention by bytes, applied by the background trimmer: the feed keeps
// the latest changes whose sizes (key, value, 48 bytes) fit in MaxBytes.
func TestTrimmerTrimsByBytes(t *testing.T) {
	s, _, _ := openStore(t)
	ctx := context.Background()
	const size = 4 + 100 + 48 // a change below: a 4-byte key, a 100-byte value
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{KeepValues: true, MaxBytes: 5 * size}))
	opts, err := changefeed.Feeds(ctx, s)
	require.NoError(t, err)
	require.EqualValues(t, 5*size, opts["default"].MaxBytes)
	for i := range 20 {
		require.NoError(t, s.Put(fmt.Appendf(nil, "k%03d", i), make([]byte, 100)))
	}
	last := mustNow(t, s).Seq - 1
	tr, err := changefeed.StartTrimmer(ctx, s, changefeed.TrimmerOptions{Interval: time.Millisecond, Step: 4})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return oldest(t, s) == last-4 }, 5*time.Second, time.Millisecond)
	require.NoError(t, tr.Close())
	require.Equal(t, last-4, oldest(t, s), "five changes kept, no more trimmed")

	require.ErrorIs(t, changefeed.Enable(ctx, s, "default", changefeed.Options{MaxBytes: -1}), kvstore.ErrInvalidOption)
}

// A feeds table written before retention by bytes (no max_bytes column)
// is read as it is, and gains the column when a feed's options are set.
func TestFeedsTableWithoutMaxBytes(t *testing.T) {
	s, _, path := openStore(t)
	ctx := context.Background()
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{MaxCount: 7}))
	require.NoError(t, s.Close())

	raw, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	_, err = raw.Exec(`DROP TABLE "__snkv_changelog_feeds";
CREATE TABLE "__snkv_changelog_feeds" (cf TEXT PRIMARY KEY NOT NULL, keep_values INTEGER NOT NULL,
	max_count INTEGER NOT NULL, max_age_ms INTEGER NOT NULL) STRICT, WITHOUT ROWID;
INSERT INTO "__snkv_changelog_feeds" VALUES ('default', 0, 7, 0);
UPDATE "__snkv_meta" SET value = value + 1 WHERE name = 'changefeed';`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	s, err = kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	opts, err := changefeed.Feeds(ctx, s)
	require.NoError(t, err)
	require.Equal(t, changefeed.Options{MaxCount: 7}, opts["default"])
	require.NoError(t, s.Put([]byte("k"), []byte("v")), "a writer reads the old table")
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{MaxCount: 7, MaxBytes: 1000}))
	opts, err = changefeed.Feeds(ctx, s)
	require.NoError(t, err)
	require.Equal(t, changefeed.Options{MaxCount: 7, MaxBytes: 1000}, opts["default"])
}

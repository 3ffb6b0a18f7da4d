package tests

import (
	"bytes"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/kvstore"
)

// queryStrings runs q on raw (database/sql, as another program reads the
// file) and returns the first column of its rows.
func queryStrings(t crashTB, raw *sql.DB, q string) []string {
	t.Helper()
	rows, err := raw.Query(q)
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	return out
}

// randomBound returns a random four-digit key, or (one time in five) nil
// for an open end.
func randomBound(rng *rand.Rand) []byte {
	if rng.IntN(5) == 0 {
		return nil
	}
	return fmt.Appendf(nil, "%04d", rng.IntN(10000))
}

// randomScan returns scan options in a random order, borrowed or not, over
// a random two-digit prefix (one time in four) or random bounds.
func randomScan(rng *rand.Rand) kvstore.IterOptions {
	opts := kvstore.IterOptions{Reverse: rng.IntN(2) == 0, Borrow: rng.IntN(2) == 0}
	if rng.IntN(4) == 0 {
		opts.Prefix = fmt.Appendf(nil, "%02d", rng.IntN(100))
	} else {
		opts.Start, opts.End = randomBound(rng), randomBound(rng)
	}
	return opts
}

// randomWalk returns a random four-digit seek key and n random steps for
// walkCursor (true: Next, two times in three).
func randomWalk(rng *rand.Rand, n int) (seek []byte, steps []bool) {
	seek = fmt.Appendf(nil, "%04d", rng.IntN(10000))
	steps = make([]bool, n)
	for i := range steps {
		steps[i] = rng.IntN(3) > 0
	}
	return seek, steps
}

// walkCursor opens a cursor on db's default column family with the fast
// path on or off, seeks to seek and takes the steps (true: Next, false:
// Prev), and returns what it saw at each step ("key=value length" in hex,
// or "-" where the cursor was off the end and went back to First) and the
// cursor's error.
func walkCursor(t *testing.T, db *kvstore.Store, fast bool, seek []byte, steps []bool) ([]string, error) {
	t.Helper()
	engine.SetFastPath(fast)
	defer engine.SetFastPath(true)
	c, err := db.Cursor(kvstore.IterOptions{})
	require.NoError(t, err)
	defer c.Close()
	var out []string
	ok := c.Seek(seek)
	for _, next := range steps {
		if !ok {
			out = append(out, "-")
			ok = c.First()
			continue
		}
		out = append(out, fmt.Sprintf("%x=%d", c.Key(), len(c.Value())))
		if next {
			ok = c.Next()
		} else {
			ok = c.Prev()
		}
	}
	return out, c.Err()
}

// overflowEvery returns key i, made longer than a page (1,500 bytes of
// fill and up to spread more) when i is a multiple of every.
func overflowEvery(rng *rand.Rand, key []byte, i, every int, fill byte, spread int) []byte {
	if i%every == 0 {
		key = append(key, bytes.Repeat([]byte{fill}, 1500+rng.IntN(spread))...)
	}
	return key
}

// sizedValue returns value i: none when i ≡ 0 mod every, one on overflow
// pages (3,000 bytes and up to spread more) when i ≡ 1, else "value i".
func sizedValue(rng *rand.Rand, i, every, spread int) []byte {
	switch i % every {
	case 0:
		return nil
	case 1:
		return bytes.Repeat([]byte{byte(i)}, 3000+rng.IntN(spread))
	}
	return fmt.Appendf(nil, "value %d", i)
}

// fastEpoch is where the manual clocks of the fast-path tests start.
var fastEpoch = time.Unix(1_800_000_000, 0)

// shortOr returns full, or short when the tests run with -short.
func shortOr[T any](full, short T) T {
	if testing.Short() {
		return short
	}
	return full
}

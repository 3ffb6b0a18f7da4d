package tests

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"testing"

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

package changelog

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/internal/engine"
)

// Retention says how much history the log keeps. Zero fields keep
// everything on that count.
type Retention struct {
	MaxCount int64 // keep at most this many of the latest changes
	MaxAgeMs int64 // keep the changes of transactions younger than this
	// MaxBytes keeps the latest changes whose approximate size (ChangeSize
	// each) adds up to at most this many bytes.
	MaxBytes int64
	// Force lets the trim pass named consumers' positions; without it a
	// consumer of the current epoch holds back every change it has not read.
	Force bool
}

// ChangeOverhead is the fixed part of a change's approximate size: its
// sequence, transaction, time, op, expiry and column family name, and the
// row's and index's headers, as a round figure.
const ChangeOverhead = 48

// ChangeSize is a change's approximate size in the log, as MaxBytes counts
// it: its key, its value and ChangeOverhead.
func ChangeSize(key, value []byte) int64 {
	return int64(len(key)+len(value)) + ChangeOverhead
}

// bytesSQL reads the log's changes newest first with their sizes
// (ChangeSize, ?1 the overhead), for bytesCut to add up.
const bytesSQL = `SELECT seq, coalesce(length(key), 0) + coalesce(length(value), 0) + ?1
	FROM "__snkv_changelog" WHERE seq > 0 ORDER BY seq DESC`

// bytesCut returns the first change retention by max bytes keeps (0 when
// it keeps them all): it reads from the newest change back, and stops at
// the first that does not fit.
func bytesCut(ctx context.Context, c *engine.Conn, max int64) (int64, error) {
	rows, err := c.Query(ctx, bytesSQL, int64(ChangeOverhead))
	if err != nil {
		return 0, fmt.Errorf("changelog: retention by bytes: %w", err)
	}
	var total, cut int64
	for rows.Next() {
		if total += rows.Int(1); total > max {
			cut = rows.Int(0) + 1
			break
		}
	}
	err = rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("changelog: retention by bytes: %w", err)
	}
	return cut, nil
}

// RetainStep deletes, inside the write transaction on c, up to step of the
// oldest changes that r no longer keeps, and reports how many it deleted;
// a background trimmer calls it in short transactions until it reports
// fewer than step. The last change is always kept.
func RetainStep(ctx context.Context, c *engine.Conn, r Retention, nowMs int64, step int) (int64, error) {
	if step <= 0 || r.MaxCount < 0 || r.MaxAgeMs < 0 || r.MaxBytes < 0 {
		return 0, fmt.Errorf("changelog: retention step %d: %w", step, engine.ErrInvalidArgument)
	}
	oldest, last, err := Bounds(ctx, c)
	if err != nil || last == 0 {
		return 0, err
	}
	before := oldest // delete nothing unless a rule says so
	if r.MaxCount > 0 && last-r.MaxCount+1 > before {
		before = last - r.MaxCount + 1
	}
	if r.MaxAgeMs > 0 {
		// The first change recorded at or after the cut-off; at_ms only
		// grows with seq when the clock does, so this is a scan from the
		// oldest change that stops at the first young one.
		dest := make([]driver.Value, 1)
		err := c.QueryRow(ctx, `SELECT seq FROM "__snkv_changelog" WHERE seq > 0 AND at_ms >= ? ORDER BY seq LIMIT 1`, dest, nowMs-r.MaxAgeMs)
		switch {
		case err == nil:
			if s, _ := dest[0].(int64); s > before {
				before = s
			}
		case errors.Is(err, engine.ErrNotFound):
			before = last + 1 // every change is too old (Trim keeps the last)
		default:
			return 0, fmt.Errorf("changelog: retention by age: %w", err)
		}
	}
	if r.MaxBytes > 0 {
		cut, err := bytesCut(ctx, c, r.MaxBytes)
		if err != nil {
			return 0, err
		}
		if cut > before {
			before = cut
		}
	}
	if !r.Force {
		if before, err = TrimLimit(ctx, c, before); err != nil {
			return 0, err
		}
	}
	if before <= oldest {
		return 0, nil
	}
	return Trim(ctx, c, before, step)
}

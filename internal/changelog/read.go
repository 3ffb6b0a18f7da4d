package changelog

import (
	"bytes"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/scan"
)

// ErrCompacted is matched (errors.Is) by a *CompactedError: a read from a
// sequence the log no longer holds.
var ErrCompacted = errors.New("snkv: change log compacted past the position")

// CompactedError reports a read from a sequence older than the oldest the
// log holds, and names that oldest sequence.
type CompactedError struct {
	From, Oldest int64
}

func (e *CompactedError) Error() string {
	return fmt.Sprintf("snkv: change log compacted: position %d is older than the oldest retained change %d", e.From, e.Oldest)
}

// Is makes a *CompactedError match ErrCompacted.
func (e *CompactedError) Is(target error) bool { return target == ErrCompacted }

// Two subqueries, each a seek to one end of the table's B-tree: SQLite
// optimises a lone min or max, not both in one SELECT (that scans).
const boundsSQL = `SELECT (SELECT min(seq) FROM "__snkv_changelog" WHERE seq > 0), (SELECT max(seq) FROM "__snkv_changelog" WHERE seq > 0)`

// Bounds returns the oldest and the last sequence the log holds (0, 0 when
// it holds no change yet).
func Bounds(ctx context.Context, c *engine.Conn) (oldest, last int64, err error) {
	dest := make([]driver.Value, 2)
	if err := c.QueryRow(ctx, boundsSQL, dest); err != nil {
		return 0, 0, fmt.Errorf("changelog: bounds: %w", err)
	}
	oldest, _ = dest[0].(int64)
	last, _ = dest[1].(int64)
	return oldest, last, nil
}

// Filter selects changes by column family and key prefix. The zero Filter
// selects every change.
type Filter struct {
	CF     string // "" : every column family
	Prefix []byte // nil or empty: every key; column family events (no key) pass only without a prefix
	// A range delete passes a prefix when its range [key, value) holds
	// keys with the prefix.
}

// filteredSQL has no LIMIT, for the reason readSQL has none: the reader
// stops stepping at its limit.
const filteredSQL = `SELECT seq, tx, at_ms, cf, op, key, value, ifnull(expiry_ms, -1) FROM "__snkv_changelog"
WHERE seq >= ?1 AND (?2 = '' OR cf = ?2) AND (?3 IS NULL
	OR (key >= ?3 AND (?4 IS NULL OR key < ?4))
	OR (op = 3 AND (?4 IS NULL OR key < ?4) AND (value IS NULL OR value > ?3)))
ORDER BY seq`

// ReadFiltered returns up to limit changes from sequence from on that pass
// f, in order, and the sequence to read from next (past every change it
// looked at, including those f skipped, so that a reader of a quiet prefix
// still moves forward). A from older than the oldest retained change,
// once the log has been trimmed, fails with a *CompactedError.
func ReadFiltered(ctx context.Context, c *engine.Conn, from int64, f Filter, limit int) ([]Change, int64, error) {
	if limit <= 0 {
		return nil, from, fmt.Errorf("changelog: read limit %d: %w", limit, engine.ErrInvalidArgument)
	}
	oldest, last, err := Bounds(ctx, c)
	if err != nil {
		return nil, from, err
	}
	return readFiltered(ctx, c, from, f, limit, oldest, last)
}

// headSQL reads the epoch and the bounds in one statement: three seeks.
const headSQL = `SELECT (SELECT key FROM "__snkv_changelog" WHERE seq = 0), (SELECT min(seq) FROM "__snkv_changelog" WHERE seq > 0), (SELECT max(seq) FROM "__snkv_changelog" WHERE seq > 0)`

// ReadPage is ReadFiltered from pos.Seq for a reader holding position pos,
// with the epoch checked in the same statement that reads the bounds: a
// pos without an epoch takes the store's (it is set in pos), one of
// another epoch fails with ErrEpoch. A store without a change log fails
// with engine.ErrNotFound.
func ReadPage(ctx context.Context, c *engine.Conn, pos *Position, f Filter, limit int) ([]Change, int64, error) {
	if limit <= 0 {
		return nil, pos.Seq, fmt.Errorf("changelog: read limit %d: %w", limit, engine.ErrInvalidArgument)
	}
	dest := make([]driver.Value, 3)
	if err := c.QueryRow(ctx, headSQL, dest); err != nil {
		if engine.NoSuchTable(err) {
			return nil, pos.Seq, engine.ErrNotFound
		}
		return nil, pos.Seq, fmt.Errorf("changelog: read: %w", err)
	}
	ep, ok := dest[0].([]byte)
	if !ok || len(ep) != EpochLen {
		return nil, pos.Seq, fmt.Errorf("changelog: header row: %w", engine.ErrCorrupt)
	}
	if pos.Epoch == nil {
		pos.Epoch = bytes.Clone(ep)
	} else if !bytes.Equal(ep, pos.Epoch) {
		return nil, pos.Seq, fmt.Errorf("changelog: position %d: %w", pos.Seq, ErrEpoch)
	}
	oldest, _ := dest[1].(int64)
	last, _ := dest[2].(int64)
	return readFiltered(ctx, c, pos.Seq, f, limit, oldest, last)
}

func readFiltered(ctx context.Context, c *engine.Conn, from int64, f Filter, limit int, oldest, last int64) ([]Change, int64, error) {
	if from < 1 {
		from = 1
	}
	if oldest > 1 && from < oldest {
		return nil, from, &CompactedError{From: from, Oldest: oldest}
	}
	var pfx, end any
	if len(f.Prefix) > 0 {
		pfx = f.Prefix
		if e := scan.PrefixEnd(f.Prefix); e != nil {
			end = e
		}
	}
	out, _, err := queryFiltered(ctx, c, from, f.CF, pfx, end, limit)
	if err != nil {
		return nil, from, err
	}
	next := from
	switch {
	case len(out) == limit:
		next = out[len(out)-1].Seq + 1
	case last >= from:
		next = last + 1 // every change up to last was looked at
	}
	if len(out) > 0 && out[len(out)-1].Seq >= next {
		next = out[len(out)-1].Seq + 1 // read outside a transaction: a commit landed between the two statements
	}
	return out, next, nil
}

// Trim deletes up to max of the oldest changes with a sequence below
// before, inside the write transaction on c, and reports how many it
// deleted. It never deletes the last change, whose sequence the next
// transaction continues from.
func Trim(ctx context.Context, c *engine.Conn, before int64, max int) (int64, error) {
	if max <= 0 {
		return 0, fmt.Errorf("changelog: trim of %d changes: %w", max, engine.ErrInvalidArgument)
	}
	n, err := c.Exec(ctx, `DELETE FROM "__snkv_changelog" WHERE seq IN (
		SELECT seq FROM "__snkv_changelog" WHERE seq > 0 AND seq < ?1
		AND seq < (SELECT max(seq) FROM "__snkv_changelog") ORDER BY seq LIMIT ?2)`, before, max)
	if err != nil {
		return 0, fmt.Errorf("changelog: trim: %w", err)
	}
	return n, nil
}

// queryFiltered runs filteredSQL and returns up to limit changes, and
// whether the statement was compiled again.
func queryFiltered(ctx context.Context, c *engine.Conn, from int64, cf string, pfx, end any, limit int) ([]Change, bool, error) {
	rows, err := c.Query(ctx, filteredSQL, from, cf, pfx, end)
	if err != nil {
		return nil, false, fmt.Errorf("changelog: read: %w", err)
	}
	return collect(rows, limit)
}

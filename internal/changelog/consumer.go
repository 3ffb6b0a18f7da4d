package changelog

import (
	"bytes"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/snkv-go/snkv/internal/engine"
)

// ErrEpoch is returned for a position taken in another history of the
// store (before a restore from backup or a reset): reading from it could
// skip or repeat changes silently.
var ErrEpoch = errors.New("snkv: change log position is from another epoch")

// Position is a place in the change log: the next sequence to read, in the
// history named by Epoch.
type Position struct {
	Epoch []byte
	Seq   int64
}

// Consumer is a named consumer's saved position.
type Consumer struct {
	Name      string
	Pos       Position
	UpdatedMs int64
}

// ConsumersTable holds the named consumers' positions (docs/format.md).
const ConsumersTable = "__snkv_changelog_consumers"

const (
	consumersSQL = `CREATE TABLE IF NOT EXISTS "__snkv_changelog_consumers" (
	name TEXT PRIMARY KEY,
	epoch BLOB NOT NULL,
	seq INTEGER NOT NULL,
	updated_ms INTEGER NOT NULL
) WITHOUT ROWID`
	saveSQL   = `INSERT INTO "__snkv_changelog_consumers" (name, epoch, seq, updated_ms) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET epoch = excluded.epoch, seq = excluded.seq, updated_ms = excluded.updated_ms`
	loadSQL   = `SELECT epoch, seq, updated_ms FROM "__snkv_changelog_consumers" WHERE name = ?`
	listSQL   = `SELECT name, epoch, seq, updated_ms FROM "__snkv_changelog_consumers" ORDER BY name`
	deleteSQL = `DELETE FROM "__snkv_changelog_consumers" WHERE name = ?`
	minSQL    = `SELECT min(seq) FROM "__snkv_changelog_consumers" WHERE epoch = ?`
)

// EnsureConsumers creates the consumers' table if it does not exist,
// inside the write transaction on c.
func EnsureConsumers(ctx context.Context, c *engine.Conn) error {
	if err := c.ExecScript(ctx, consumersSQL); err != nil {
		return fmt.Errorf("changelog: create consumers: %w", err)
	}
	return nil
}

// CheckEpoch fails with ErrEpoch unless p was taken in the store's
// current history.
func CheckEpoch(ctx context.Context, c *engine.Conn, p Position) error {
	ep, err := Epoch(ctx, c)
	if err != nil {
		return err
	}
	if !bytes.Equal(ep, p.Epoch) {
		return fmt.Errorf("changelog: position %d: %w", p.Seq, ErrEpoch)
	}
	return nil
}

// SaveConsumer stores name's position inside the write transaction on c,
// the consumer's own transaction when it writes to this store, so that
// its writes and its position commit together. A position of another
// epoch fails with ErrEpoch.
func SaveConsumer(ctx context.Context, c *engine.Conn, name string, p Position, nowMs int64) error {
	if name == "" || p.Seq < 1 {
		return fmt.Errorf("changelog: consumer %q at %d: %w", name, p.Seq, engine.ErrInvalidArgument)
	}
	if err := CheckEpoch(ctx, c, p); err != nil {
		return err
	}
	if _, err := c.Exec(ctx, saveSQL, name, p.Epoch, p.Seq, nowMs); err != nil {
		return fmt.Errorf("changelog: save consumer %q: %w", name, err)
	}
	return nil
}

// LoadConsumer reads name's saved position; engine.ErrNotFound if it has
// none.
func LoadConsumer(ctx context.Context, c *engine.Conn, name string) (Consumer, error) {
	dest := make([]driver.Value, 3)
	if err := c.QueryRow(ctx, loadSQL, dest, name); err != nil {
		if engine.NoSuchTable(err) {
			err = engine.ErrNotFound
		}
		return Consumer{}, fmt.Errorf("changelog: consumer %q: %w", name, err)
	}
	ep, _ := dest[0].([]byte)
	seq, _ := dest[1].(int64)
	at, _ := dest[2].(int64)
	return Consumer{Name: name, Pos: Position{Epoch: ep, Seq: seq}, UpdatedMs: at}, nil
}

// ListConsumers returns every named consumer, by name.
func ListConsumers(ctx context.Context, c *engine.Conn) ([]Consumer, error) {
	rows, err := c.Query(ctx, listSQL)
	if err != nil {
		if engine.NoSuchTable(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("changelog: consumers: %w", err)
	}
	var out []Consumer
	for rows.Next() {
		out = append(out, Consumer{
			Name:      string(rows.Bytes(0)),
			Pos:       Position{Epoch: rows.Bytes(1), Seq: rows.Int(2)},
			UpdatedMs: rows.Int(3),
		})
	}
	err = rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("changelog: consumers: %w", err)
	}
	return out, nil
}

// DeleteConsumer forgets name inside the write transaction on c, and
// reports whether it existed.
func DeleteConsumer(ctx context.Context, c *engine.Conn, name string) (bool, error) {
	n, err := c.Exec(ctx, deleteSQL, name)
	if err != nil {
		if engine.NoSuchTable(err) {
			return false, nil
		}
		return false, fmt.Errorf("changelog: delete consumer %q: %w", name, err)
	}
	return n > 0, nil
}

// TrimLimit returns the sequence below which a trim may delete without
// passing a named consumer of the current epoch: the lowest saved
// position, or max when no consumer holds one back.
func TrimLimit(ctx context.Context, c *engine.Conn, max int64) (int64, error) {
	ep, err := Epoch(ctx, c)
	if err != nil {
		return 0, err
	}
	dest := make([]driver.Value, 1)
	if err := c.QueryRow(ctx, minSQL, dest, ep); err != nil {
		if engine.NoSuchTable(err) {
			return max, nil
		}
		return 0, fmt.Errorf("changelog: trim limit: %w", err)
	}
	if m, ok := dest[0].(int64); ok && m < max {
		return m, nil
	}
	return max, nil
}

// SnapshotPosition returns the position that follows everything visible
// to the transaction on c: read in the same read transaction as a
// snapshot of a column family's rows, it is where the changes after that
// snapshot start, with no gap and no overlap.
func SnapshotPosition(ctx context.Context, c *engine.Conn) (Position, error) {
	ep, err := Epoch(ctx, c)
	if err != nil {
		return Position{}, err
	}
	_, last, err := Bounds(ctx, c)
	if err != nil {
		return Position{}, err
	}
	return Position{Epoch: ep, Seq: last + 1}, nil
}

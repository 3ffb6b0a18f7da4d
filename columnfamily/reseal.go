package columnfamily

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/seal"
	"github.com/snkv-go/snkv/ttl"
)

// The encryption header and the conversions between forms (see seal.go).

// sealHeaderRow is the meta table row that holds the encryption header.
const sealHeaderRow = "encryption"

// readSealHeader reads the encryption header on c, a connection to a file
// of format 2 (a version-1 file has no meta table and is never
// encrypted): nil for a store without encryption.
func readSealHeader(ctx context.Context, c *engine.Conn) ([]byte, error) {
	rows, err := c.Query(ctx, `SELECT value FROM `+metaTable+` WHERE name = ?1`, sealHeaderRow)
	if err != nil {
		return nil, err
	}
	var h []byte
	if rows.Next() {
		raw, k := rows.RawBlob(0)
		if k != engine.KindBlob {
			_ = rows.Close()
			return nil, fmt.Errorf("%w: %w", engine.ErrAuth, seal.ErrHeader)
		}
		h = bytes.Clone(raw)
	}
	return h, rows.Close()
}

// WriteSealHeader stores the encryption header h on c, inside the
// caller's write transaction; a nil h removes it (and the store is then
// without encryption).
func WriteSealHeader(ctx context.Context, c *engine.Conn, h []byte) error {
	var err error
	if h == nil {
		_, err = c.Exec(ctx, `DELETE FROM `+metaTable+` WHERE name = ?1`, sealHeaderRow)
	} else {
		_, err = c.Exec(ctx, `INSERT OR REPLACE INTO `+metaTable+` (name, value) VALUES (?1, ?2)`, sealHeaderRow, h)
	}
	return err
}

// SealHeader returns the encryption header Init read with the file's
// format (nil: none), so that Open needs no second connection or round
// trip for it.
func (r *Registry) SealHeader() []byte { return r.sealHdr }

// SetSeal makes the row codec follow st (nil: no encryption).
func (r *Registry) SetSeal(st *seal.State) { r.env.Seal.Store(st) }

// Sealing reports whether the row codec follows an encryption state.
func (r *Registry) Sealing() bool { return r.env.Seal.Load() != nil }

// Formatted reports whether the file is of format 2, the first that can be
// encrypted.
func (r *Registry) Formatted() bool { return r.v2.Load() }

// markSealed records, inside the caller's write transaction, that hidden
// table table is sealed.
func markSealed(ctx context.Context, c *engine.Conn, table string) error {
	_, err := c.Exec(ctx, `INSERT OR IGNORE INTO `+metaTable+` (name, value) VALUES (?1, 1)`, sealedMarker(table))
	return err
}

// SealHidden marks the existing hidden table name of kind sealed (a table
// made before it could be), and in an encrypted store seals the values it
// holds, in transactions of batch rows.
func (r *Registry) SealHidden(ctx context.Context, kind, name string, batch int) error {
	if err := ValidateHidden(kind, name); err != nil {
		return err
	}
	cf, err := r.OpenHidden(ctx, kind, name)
	if err != nil {
		return err
	}
	if cf.m.sealed.Load() {
		return nil
	}
	if !r.v2.Load() {
		return fmt.Errorf("%w: a version-1 file: run Upgrade first", engine.ErrVersion)
	}
	err = r.env.update(ctx, nil, "seal hidden table", func(ctx context.Context, tx *engine.Tx) error {
		return markSealed(ctx, tx.Conn(), cf.m.name)
	})
	if err != nil {
		return err
	}
	cf.m.sealed.Store(true)
	if r.env.Seal.Load() == nil {
		return nil
	}
	_, err = r.resealTable(ctx, cf.m.name, batch, true, nil)
	return err
}

// Reseal rewrites, in transactions of batch rows, every value of every
// sealed table that is not in the form the row codec writes now: sealed
// under its write key, or in the clear when it has none. Each row says its
// form, so a Reseal stopped anywhere (a crash included) is resumed by
// running it again. progress, if not nil, gets the running count of
// values rewritten after each transaction.
func (r *Registry) Reseal(ctx context.Context, batch int, progress func(int64)) (int64, error) {
	var names []string
	err := r.env.DB.WithReader(ctx, func(c *engine.Conn) error {
		var err error
		names, err = catalogNames(ctx, c)
		return err
	})
	if err != nil {
		return 0, engine.Wrap(ctx, "convert values", err)
	}
	slices.Sort(names)
	var total int64
	for _, name := range names {
		n, err := r.resealTable(ctx, name, batch, false, func(n int64) {
			if progress != nil {
				progress(total + n)
			}
		})
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// resealTable is Reseal of one table (a catalog name). fromClear accepts
// values in the clear whatever the state says: the table has just been
// made sealed (SealHidden).
func (r *Registry) resealTable(ctx context.Context, name string, batch int, fromClear bool, progress func(int64)) (int64, error) {
	var after []byte
	var total int64
	for {
		var n, done int
		err := r.env.update(ctx, nil, "convert values of "+name, func(ctx context.Context, tx *engine.Tx) error {
			c := tx.Conn()
			stamp, err := c.QueryInt(ctx, `SELECT created_ms FROM `+catalog+` WHERE name = ?1`, name)
			if err != nil {
				return err
			}
			m, err := r.metaFor(ctx, c, name, stamp)
			if err != nil || !m.sealed.Load() {
				return err
			}
			cf := &ColumnFamily{m: m, tx: tx}
			n, done, after, err = cf.resealBatch(ctx, c, after, batch, fromClear)
			return err
		})
		total += int64(done)
		if err != nil {
			return total, err
		}
		if progress != nil && done > 0 {
			progress(total)
		}
		if n < batch {
			return total, nil
		}
	}
}

// resealRow is a row read for conversion.
type resealRow struct {
	key, stored []byte
	crc         int64
	kind        int
	exp         []byte // nil: no TTL
}

// resealBatch rewrites the rows after key after (all from the first when
// nil), at most batch of them, that are not in the form the codec writes.
// It returns the rows read, the rows rewritten and the last key read.
func (cf *ColumnFamily) resealBatch(ctx context.Context, c *engine.Conn, after []byte, batch int, fromClear bool) (n, done int, last []byte, err error) {
	m := cf.m
	sh := m.w()
	if !sh.t.Crc {
		return 0, 0, nil, fmt.Errorf("%w: a version-1 table: run Upgrade first", engine.ErrVersion)
	}
	if after == nil {
		after = []byte{} // every key has at least one byte
	}
	rows, err := c.Query(ctx, `SELECT key, value, expire_ms, crc FROM `+sh.t.View+` WHERE key > ?1 ORDER BY key LIMIT ?2`, after, int64(batch))
	if err != nil {
		return 0, 0, nil, err
	}
	var todo []resealRow
	ss := m.env.Seal.Load()
	for rows.Next() {
		n++
		key, stored := bytes.Clone(rows.RawBytes(0)), rows.RawBytes(1)
		last = key
		var exp []byte
		if e, k := rows.RawBlob(2); k == engine.KindBlob {
			exp = e
		}
		crc, kind := rows.IntKind(3)
		sum := dataSum(key, stored, exp != nil)
		if kind == engine.KindInt && (ss == nil || ss.Write == nil) && crc == sum ||
			kind == engine.KindInt && ss != nil && ss.Write != nil && crc == sum^ss.Write.Flag() {
			continue // already in the form wanted
		}
		todo = append(todo, resealRow{key: key, stored: bytes.Clone(stored), crc: crc, kind: kind, exp: bytes.Clone(exp)})
	}
	if err := rows.Close(); err != nil {
		return 0, 0, nil, err
	}
	var st engine.Counters
	for _, row := range todo {
		hasTTL := row.exp != nil
		sum := dataSum(row.key, row.stored, hasTTL)
		value := row.stored
		if !fromClear || row.kind != engine.KindInt || row.crc != sum {
			if value, _, err = m.decode(&st, row.key, row.stored, sum, row.crc, row.kind, true, nil, nil); err != nil {
				return 0, 0, nil, err
			}
		}
		stored, wsum := m.encode(c, sh, row.key, value, hasTTL)
		if !hasTTL {
			_, err = writeRow(ctx, c, sh, row.key, stored, wsum)
		} else {
			var expMs int64
			if expMs, err = ttl.Decode(row.exp); err == nil {
				err = cf.writeRowTTL(ctx, c, sh, row.key, stored, wsum, expMs)
			}
		}
		if err != nil {
			return 0, 0, nil, err
		}
		done++
	}
	return n, done, last, nil
}

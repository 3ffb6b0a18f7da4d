package catalog

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/snkv-go/snkv/internal/changelog"
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/family"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/internal/rowcodec"
	"github.com/snkv-go/snkv/internal/seal"
)

// The encryption header and the conversions between forms (see the row
// codec, package rowcodec).

// readSealHeader reads the encryption header on c, a connection to a file
// of format 2 (a version-1 file has no meta table and is never
// encrypted): nil for a store without encryption; and whether a scrub is
// still to run.
func readSealHeader(ctx context.Context, c *engine.Conn) (h []byte, scrub bool, err error) {
	rows, err := c.Query(ctx, `SELECT name, value FROM `+metaTable+` WHERE name IN (?1, ?2)`, layout.SealHeaderRow, layout.ScrubRow)
	if err != nil {
		return nil, false, err
	}
	for rows.Next() {
		if string(rows.RawBytes(0)) == layout.ScrubRow {
			scrub = true
			continue
		}
		raw, k := rows.RawBlob(1)
		if k != engine.KindBlob {
			// Damage to the row (a tool that rewrote it, a flipped type
			// bit), not a wrong secret: the header is a BLOB.
			_ = rows.Close()
			return nil, false, fmt.Errorf("%w: %w: the %s row of %s is %s, not a BLOB", engine.ErrCorrupt, seal.ErrHeader, layout.SealHeaderRow, layout.MetaTable, kindName(k))
		}
		h = bytes.Clone(raw)
	}
	return h, scrub, rows.Close()
}

// WriteSealHeader stores the encryption header h on c, inside the
// caller's write transaction; a nil h removes it (and the store is then
// without encryption).
func WriteSealHeader(ctx context.Context, c *engine.Conn, h []byte) error {
	var err error
	if h == nil {
		_, err = c.Exec(ctx, `DELETE FROM `+metaTable+` WHERE name = ?1`, layout.SealHeaderRow)
	} else {
		_, err = c.Exec(ctx, `INSERT OR REPLACE INTO `+metaTable+` (name, value) VALUES (?1, ?2)`, layout.SealHeaderRow, h)
	}
	return err
}

// MarkScrub records on c, inside the caller's write transaction, that a
// conversion's scrub is still to run (pending), or that it has run.
func MarkScrub(ctx context.Context, c *engine.Conn, pending bool) error {
	var err error
	if pending {
		_, err = c.Exec(ctx, `INSERT OR REPLACE INTO `+metaTable+` (name, value) VALUES (?1, 1)`, layout.ScrubRow)
	} else {
		_, err = c.Exec(ctx, `DELETE FROM `+metaTable+` WHERE name = ?1`, layout.ScrubRow)
	}
	return err
}

// Created reports whether Init made the file a store: it was new, or an
// empty SQLite file (or another application's, adopted).
func (r *Registry) Created() bool { return r.created }

// ScrubPending reports whether, when Init read it, the file recorded a
// conversion's scrub still to run (see MarkScrub).
func (r *Registry) ScrubPending() bool { return r.sealScrub }

// SealHeader returns the encryption header Init read with the file's
// format (nil: none), so that Open needs no second connection or round
// trip for it.
func (r *Registry) SealHeader() []byte { return r.sealHdr }

// SetSeal makes the row codec follow st (nil: no encryption), whose
// header, as stored in the file, is header: a read whose snapshot holds
// that header reads with st even after the store has moved on
// (family.Env.Follow).
func (r *Registry) SetSeal(st *seal.State, header []byte) { r.env.Follow(st, header) }

// Sealing reports whether the row codec follows an encryption state.
func (r *Registry) Sealing() bool { return r.env.Seal.Load() != nil }

// Formatted reports whether the file is of format 2, the first that can be
// encrypted.
func (r *Registry) Formatted() bool { return r.v2.Load() }

// markSealed records, inside the caller's write transaction, that hidden
// table table is sealed.
func markSealed(ctx context.Context, c *engine.Conn, table string) error {
	_, err := c.Exec(ctx, `INSERT OR IGNORE INTO `+metaTable+` (name, value) VALUES (?1, 1)`, layout.SealedMarker(table))
	return err
}

// SealHidden marks the existing hidden table name of kind sealed (a table
// made before it could be), and in an encrypted store seals the values it
// holds, in transactions of batch rows (rows it cannot read are left as
// they were and reported).
func (r *Registry) SealHidden(ctx context.Context, kind, name string, batch int) (ResealReport, error) {
	var rep ResealReport
	if err := ValidateHidden(kind, name); err != nil {
		return rep, err
	}
	f, err := r.OpenHidden(ctx, kind, name)
	if err != nil {
		return rep, err
	}
	if f.Sealed.Load() {
		return rep, nil
	}
	if !r.v2.Load() {
		return rep, fmt.Errorf("%w: a version-1 file: run Upgrade first", engine.ErrVersion)
	}
	err = r.env.Update(ctx, nil, "seal hidden table", func(ctx context.Context, tx *engine.Tx) error {
		return markSealed(ctx, tx.Conn(), f.Name)
	})
	if err != nil {
		return rep, err
	}
	f.Sealed.Store(true)
	if r.env.Seal.Load() == nil {
		return rep, nil
	}
	err = r.resealTable(ctx, f.Name, batch, true, &rep, nil)
	return rep, err
}

// ResealReport is what Reseal did.
type ResealReport struct {
	// Converted is the number of values rewritten.
	Converted int64
	// Bad is the number of rows that could not be read (a value that fails
	// its checksum or authentication), left as they were.
	Bad int64
	// Problems names them, as CheckIntegrity does (at most maxAuthLines
	// per table, then a count).
	Problems []string
}

// Reseal rewrites, in transactions of batch rows, every value of every
// sealed table that is not in the form the row codec writes now: sealed
// under its write key, or in the clear when it has none. Each row says its
// form, so a Reseal stopped anywhere (a crash included) is resumed by
// running it again. A row that cannot be read (damaged, forged, or
// written in another form by a process that had the store open before
// the conversion) is left as it was and reported: it cannot stop a
// conversion. progress, if not nil, gets the running count of values
// rewritten after each transaction.
func (r *Registry) Reseal(ctx context.Context, batch int, progress func(int64)) (ResealReport, error) {
	var rep ResealReport
	var names []string
	err := r.env.DB.WithReader(ctx, func(c *engine.Conn) error {
		var err error
		names, err = catalogNames(ctx, c)
		return err
	})
	if err != nil {
		return rep, engine.Wrap(ctx, "convert values", err)
	}
	slices.Sort(names)
	for _, name := range names {
		base := rep.Converted
		err := r.resealTable(ctx, name, batch, false, &rep, func(n int64) {
			if progress != nil {
				progress(base + n)
			}
		})
		if err != nil {
			return rep, err
		}
	}
	base := rep.Converted
	err = r.resealLog(ctx, batch, &rep, func(n int64) {
		if progress != nil {
			progress(base + n)
		}
	})
	return rep, err
}

// resealLog is Reseal of the change log's kept values (a feed with
// KeepValues seals them as the rows are sealed), adding what it did to
// rep: in transactions that each read at most batch changes, resumed, as
// the tables are, by running it again.
func (r *Registry) resealLog(ctx context.Context, batch int, rep *ResealReport, progress func(int64)) error {
	var after int64
	return r.resealBatches(ctx, "change log", "kept values", "convert the change log's kept values", batch, rep, progress,
		func(ctx context.Context, tx *engine.Tx) (n, done int, skipped []error, err error) {
			n, done, after, skipped, err = changelog.ResealBatch(ctx, tx.Conn(), r.env.Seal.Load(), after, batch)
			return n, done, skipped, err
		})
}

// resealTable is Reseal of one table (a catalog name), adding what it did
// to rep. fromClear accepts values in the clear whatever the state says:
// the table has just been made sealed (SealHidden).
func (r *Registry) resealTable(ctx context.Context, name string, batch int, fromClear bool, rep *ResealReport, progress func(int64)) error {
	var after []byte
	return r.resealBatches(ctx, fmt.Sprintf("column family %q", name), "rows", "convert values of "+name, batch, rep, progress,
		func(ctx context.Context, tx *engine.Tx) (n, done int, skipped []error, err error) {
			c := tx.Conn()
			stamp, ok, err := catalogStamp(ctx, c, name)
			if err != nil || !ok {
				// Dropped since Reseal listed it: nothing left to convert.
				return 0, 0, nil, err
			}
			m, err := r.familyFor(ctx, c, name, stamp)
			if err != nil || !m.Sealed.Load() {
				return 0, 0, nil, err
			}
			n, done, after, skipped, err = resealBatch(ctx, c, m, after, batch, fromClear)
			return n, done, skipped, err
		})
}

// resealBatches runs step, one write transaction (named op) each, until
// a step reads fewer than batch entries, and adds to rep what the steps
// converted and the entries they could not read (what: the thing
// converted, items: its entries, for the report's lines); progress gets
// the running total.
func (r *Registry) resealBatches(ctx context.Context, what, items, op string, batch int, rep *ResealReport, progress func(int64),
	step func(ctx context.Context, tx *engine.Tx) (n, done int, skipped []error, err error)) error {
	var total, bad int64
	defer func() {
		if bad > maxAuthLines {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %d more %s could not be read", what, bad-maxAuthLines, items))
		}
	}()
	for {
		var n, done int
		var skipped []error
		err := r.env.Update(ctx, nil, op, func(ctx context.Context, tx *engine.Tx) error {
			var err error
			n, done, skipped, err = step(ctx, tx)
			return err
		})
		if err != nil {
			return err
		}
		total += int64(done)
		rep.Converted += int64(done)
		for _, e := range skipped {
			bad++
			rep.Bad++
			if bad <= maxAuthLines {
				rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %v", what, e))
			}
		}
		if progress != nil && done > 0 {
			progress(total)
		}
		if n < batch {
			return nil
		}
	}
}

// catalogStamp returns the creation stamp of the table name (a catalog
// name) on c; ok is false when the catalog has no such table.
func catalogStamp(ctx context.Context, c *engine.Conn, name string) (stamp int64, ok bool, err error) {
	rows, err := c.Query(ctx, `SELECT created_ms FROM `+catalog+` WHERE name = ?1`, name)
	if err != nil {
		return 0, false, err
	}
	if ok = rows.Next(); ok {
		stamp = rows.Int(0)
	}
	return stamp, ok, rows.Close()
}

// resealRow is a row read for conversion: its value in the clear.
type resealRow struct {
	key, value []byte
	exp        int64 // -1: no TTL
}

// resealBatch rewrites the rows after key after (all from the first when
// nil), at most batch of them, that are not in the form the codec writes.
// It returns the rows read, the rows rewritten, the last key read, and the
// errors of the rows it could not read (ErrAuth or ErrCorrupt), which it
// left as they were. Every row is read as a scan reads it
// (rowcodec.Codec.Check); fromClear accepts values in the clear in the
// sealed table (it has just been made sealed).
func resealBatch(ctx context.Context, c *engine.Conn, m *family.Family, after []byte, batch int, fromClear bool) (n, done int, last []byte, skipped []error, err error) {
	sh := m.Writing()
	if !sh.Objects.Crc {
		return 0, 0, nil, nil, fmt.Errorf("%w: a version-1 table: run Upgrade first", engine.ErrVersion)
	}
	if after == nil {
		after = []byte{} // every key has at least one byte
	}
	rows, err := c.Query(ctx, `SELECT key, value, expire_ms, crc FROM `+sh.Objects.Quoted.View+` WHERE key > ?1 ORDER BY key LIMIT ?2`, after, int64(batch))
	if err != nil {
		return 0, 0, nil, nil, err
	}
	cols := rowcodec.Cols{Key: 0, Value: 1, Expiry: 2, Crc: 3, Ecrc: -1}
	var todo []resealRow
	var buf rowcodec.Buffers
	cd := m.Codec(sh)
	cd.Stats = new(engine.Counters) // a conversion counts nothing
	// The form wanted: what Encode writes with the store's state.
	want := cd
	want.Seal = m.Env.Seal.Load()
	if fromClear && cd.Seal != nil {
		st := *cd.Seal
		st.Plain = true // values in the clear are read as well
		cd.Seal = &st
	}
	for rows.Next() {
		n++
		last = bytes.Clone(rows.RawBytes(0))
		if want.InFormAt(rows, &cols) {
			continue // already in the form wanted
		}
		r := cd.Check(rows, &cols, rowcodec.CopyRow, &buf)
		if r.Err != nil {
			// A row no key of this store reads: left as it was.
			skipped = append(skipped, r.Err)
			continue
		}
		todo = append(todo, resealRow{key: r.Key, value: r.Value, exp: r.Exp})
	}
	if err := rows.Close(); err != nil {
		return 0, 0, nil, nil, err
	}
	for _, row := range todo {
		hasTTL := row.exp >= 0
		stored, wsum := cd.Encode(c, row.key, row.value, hasTTL)
		if !hasTTL {
			err = cd.Write(ctx, c, row.key, stored, wsum)
		} else {
			err = m.WriteRowTTL(ctx, c, sh, row.key, stored, wsum, row.exp)
		}
		if err != nil {
			return 0, 0, nil, nil, err
		}
		done++
	}
	return n, done, last, skipped, nil
}

// hiddenSealed reports whether hidden table table is marked sealed (never
// in a version-1 file, which has no meta table).
func (r *Registry) hiddenSealed(ctx context.Context, c *engine.Conn, table string) (bool, error) {
	if !r.v2.Load() {
		return false, nil
	}
	n, err := c.QueryInt(ctx, `SELECT count(*) FROM `+metaTable+` WHERE name = ?1`, layout.SealedMarker(table))
	return n > 0, err
}

// snapshotState returns the encryption state of the snapshot of c's
// transaction: the state the store followed with the header it holds, or,
// for a header this process never followed (or one it cannot read), the
// one it follows now.
func (r *Registry) snapshotState(ctx context.Context, c *engine.Conn) *seal.State {
	now := r.env.Seal.Load()
	if !r.v2.Load() {
		return now // a version-1 file is never encrypted
	}
	h, _, err := readSealHeader(ctx, c)
	switch {
	case err != nil:
		return now
	case h == nil:
		return nil
	}
	if ss := r.env.Followed(h); ss != nil {
		return ss
	}
	return now
}

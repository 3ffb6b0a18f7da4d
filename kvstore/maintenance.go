package kvstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/snkv-go/snkv/internal/catalog"
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/family"
)

// CheckpointMode selects how hard Checkpoint works; see SQLite's
// wal_checkpoint.
type CheckpointMode int

const (
	// CheckpointPassive copies what it can without waiting for anyone.
	CheckpointPassive CheckpointMode = iota
	// CheckpointFull waits for writers, then copies the whole WAL.
	CheckpointFull
	// CheckpointRestart is Full, then waits for readers so that the next
	// writer starts the WAL from its beginning.
	CheckpointRestart
	// CheckpointTruncate is Restart, then truncates the WAL file to zero.
	CheckpointTruncate
)

// String returns the mode's SQL name (PASSIVE, FULL, RESTART, TRUNCATE).
func (m CheckpointMode) String() string {
	if m >= 0 && int(m) < len(checkpointModeNames) {
		return checkpointModeNames[m]
	}
	return fmt.Sprintf("CheckpointMode(%d)", int(m))
}

var checkpointModeNames = [...]string{
	CheckpointPassive:  "PASSIVE",
	CheckpointFull:     "FULL",
	CheckpointRestart:  "RESTART",
	CheckpointTruncate: "TRUNCATE",
}

// CheckpointResult reports a checkpoint's work, in WAL frames (pages).
type CheckpointResult struct {
	// Busy is true when the checkpoint could not finish because readers or
	// writers held it up.
	Busy bool
	// WALFrames is the number of frames in the WAL (-1 when the store is not
	// in WAL mode).
	WALFrames int64
	// Checkpointed is the number of frames copied into the database (-1
	// when the store is not in WAL mode).
	Checkpointed int64
}

// Checkpoint copies the WAL into the database file.
func (s *Store) Checkpoint(ctx context.Context, mode CheckpointMode) (CheckpointResult, error) {
	var res CheckpointResult
	if err := s.usable(ctx); err != nil {
		return res, err
	}
	if mode < CheckpointPassive || mode > CheckpointTruncate {
		return res, fmt.Errorf("snkv: checkpoint: %w: unknown mode %d", ErrInvalidOption, int(mode))
	}
	// Idle readers' held read transactions would hold the checkpoint up.
	s.db.DropHeld()
	err := s.db.WithWriter(ctx, func(c *engine.Conn) error {
		rows, err := c.Query(ctx, "PRAGMA wal_checkpoint("+mode.String()+")")
		if err != nil {
			return err
		}
		if rows.Next() {
			res = CheckpointResult{Busy: rows.Int(0) != 0, WALFrames: rows.Int(1), Checkpointed: rows.Int(2)}
		}
		return rows.Close()
	})
	return res, engine.Wrap(ctx, "checkpoint", err)
}

// IncrementalVacuum returns up to pages free pages to the file system (0:
// all of them). It works on files created by snkv (auto_vacuum is set to
// INCREMENTAL on new files); elsewhere it does nothing; use Vacuum.
func (s *Store) IncrementalVacuum(ctx context.Context, pages int) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	if pages < 0 {
		return fmt.Errorf("snkv: incremental vacuum: %w: negative page count", ErrInvalidOption)
	}
	err := s.db.WithWriter(ctx, func(c *engine.Conn) error {
		return c.ExecScript(ctx, fmt.Sprintf("PRAGMA incremental_vacuum(%d)", pages))
	})
	return engine.Wrap(ctx, "incremental vacuum", err)
}

// Vacuum rebuilds the whole file compactly. It needs free disk space of
// about the file's size and holds the write lock throughout.
func (s *Store) Vacuum(ctx context.Context) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	err := s.db.WithWriter(ctx, func(c *engine.Conn) error {
		// VACUUM builds a temporary copy of the whole file: on disk, not in
		// the writer's in-memory temporary storage.
		if err := c.ExecScript(ctx, engine.VacuumTempStore); err != nil {
			return err
		}
		err := c.ExecScript(ctx, "VACUUM")
		return errors.Join(err, c.ExecScript(context.Background(), engine.WriterTempStore))
	})
	return engine.Wrap(ctx, "vacuum", err)
}

// Backup writes a consistent copy of the store to the file dest, which must
// not exist, while writers go on (in-memory stores too). The copy is a
// compact, self-contained snkv store (rollback journal; it switches to WAL
// when opened).
func (s *Store) Backup(ctx context.Context, dest string) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	return s.db.Backup(ctx, dest)
}

// IntegrityReport is what Store.CheckIntegrity found.
type IntegrityReport struct {
	// Problems lists every problem, one line each; empty for a sound store.
	Problems []string
	// Rows is the number of rows read: every column family's data rows and
	// TTL key index rows.
	Rows int64
	// Verified is how many rows matched their checksum.
	Verified int64
	// Unverified is how many rows carry no checksum: rows written by
	// another tool (the sqlite3 shell) and every row of a version-1 store.
	// They are not problems; see docs/format.md.
	Unverified int64
	// UnverifiedByCF breaks Unverified down by column family.
	UnverifiedByCF map[string]int64
}

// CheckIntegrity checks the store and returns what it found as a report,
// counts included; IntegrityCheck runs the same checks and returns an
// error instead (nil: sound). It runs SQLite's integrity_check and then
// snkv's own checks, reading every row once (O(rows), in one read
// snapshot; writers go on):
//   - every catalogued column family has its table, read view, checksum
//     trigger and, if it uses TTL, both TTL tables and their triggers; no
//     column-family table has lost its catalog row (Repair fixes these);
//   - every key and value is a BLOB and every key 1 byte to MaxKeySize;
//   - every checksum matches (rows without one are counted as unverified);
//   - every column family's data, key index and expiry index agree;
//   - the checks the linked layers registered for their hidden tables
//     (timelog, vector).
//
// The error is for a check that could not run; what it found is in the
// report.
func (s *Store) CheckIntegrity(ctx context.Context) (IntegrityReport, error) {
	var rep IntegrityReport
	if err := s.usable(ctx); err != nil {
		return rep, err
	}
	err := s.db.WithReader(ctx, func(c *engine.Conn) error {
		rows, err := c.Query(ctx, "PRAGMA integrity_check")
		if err != nil {
			return err
		}
		for rows.Next() {
			if line := string(rows.Bytes(0)); line != "ok" {
				rep.Problems = append(rep.Problems, line)
			}
		}
		return rows.Close()
	})
	if err != nil {
		return rep, engine.Wrap(ctx, "integrity check", err)
	}
	cr, err := s.reg.Check(ctx)
	rep.Problems = append(rep.Problems, cr.Problems...)
	rep.Rows, rep.Verified, rep.Unverified, rep.UnverifiedByCF = cr.Rows, cr.Verified, cr.Unverified, cr.UnverifiedByCF
	if err != nil {
		return rep, engine.Wrap(ctx, "integrity check", err)
	}
	lp, err := s.checkLayers(ctx) // layer.go
	rep.Problems = append(rep.Problems, lp...)
	return rep, engine.Wrap(ctx, "integrity check", err)
}

// IntegrityCheck checks the store and returns nil when it is sound, else
// an error wrapping ErrCorrupt that lists the problems: CheckIntegrity's
// checks with the answer as an error, as timelog's Log.IntegrityCheck
// gives it (CheckIntegrity returns the report, with the counts of verified
// and unverified rows). Unverified rows are not problems.
func (s *Store) IntegrityCheck(ctx context.Context) error {
	rep, err := s.CheckIntegrity(ctx)
	if err != nil {
		return err
	}
	if len(rep.Problems) > 0 {
		return fmt.Errorf("snkv: integrity check: %w: %s", ErrCorrupt, strings.Join(rep.Problems, "; "))
	}
	return nil
}

// Repair restores a store whose hidden objects were damaged by hand (a
// dropped read view, TTL table or trigger, a deleted catalog row), in one
// transaction, without deleting or changing any data row: it puts back the
// catalog rows of column-family tables that lost theirs, recreates missing
// views and triggers, rebuilds a missing TTL table from the other one, and
// drops TTL index rows that no longer agree with the data. It does not mend
// rows that fail their checksum (CheckIntegrity names them). Then it runs
// the repairs layers registered for their hidden tables (timelog, vector).
// It returns one line per repair made; none for a sound store. Handles opened before
// Repair should be opened again.
func (s *Store) Repair(ctx context.Context) ([]string, error) {
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	out, err := s.reg.Repair(ctx)
	if err != nil {
		return out, err
	}
	lr, err := s.repairLayers(ctx) // layer.go
	return append(out, lr...), engine.Wrap(ctx, "repair", err)
}

// RepairFile runs Repair on the store at path without its password or
// key: what Repair restores (catalog rows, views, triggers, TTL tables) is
// never sealed, so an encrypted store needs no secret for it. opts is used
// as by Open (its Encryption is ignored); the store is closed on return.
func RepairFile(ctx context.Context, path string, opts Options) ([]string, error) {
	if err := family.CheckContext(ctx); err != nil {
		return nil, err
	}
	if opts.ReadOnly {
		return nil, fmt.Errorf("%w: repair needs a writable store", ErrReadOnly)
	}
	opts.Encryption, opts.keyless = nil, true
	s, err := Open(path, opts)
	if err != nil {
		return nil, err
	}
	out, err := s.Repair(ctx)
	return out, errors.Join(err, s.Close())
}

// Upgrade converts a version-1 store to the current format (2): every row
// gets its checksum and every table its STRICT form (see docs/format.md). It
// works in transactions of at most a few thousand rows, so other writers
// wait at most one batch, and it can be interrupted (cancelled, killed,
// power lost) and run again: it resumes where it stopped. On a current
// store it does nothing. It fails with ErrReadOnly on a read-only store and
// with ErrCorrupt, having converted nothing of that column family, when a
// table holds rows of the wrong type that another tool wrote.
func (s *Store) Upgrade(ctx context.Context) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	if err := s.reg.Upgrade(ctx, s.opts.UpgradeBatch); err != nil {
		return err
	}
	// Refresh the default handle's layout.
	_, err := s.reg.Open(ctx, DefaultColumnFamily)
	return err
}

// FormatVersion returns the store file's format version: 1 for a file
// written before checksums (until Upgrade), 3 once a column family keeps
// the TTL expiry copy in its data table (its first TTL write, or Upgrade),
// else 2.
func (s *Store) FormatVersion(ctx context.Context) (int, error) {
	if err := s.usable(ctx); err != nil {
		return 0, err
	}
	return s.reg.Format(ctx)
}

// ApplicationID is PRAGMA application_id of every snkv store file, "snkv"
// in ASCII: the big-endian 32-bit number at offset 68 of the file's header
// (docs/format.md). A tool can tell an snkv store from another SQLite
// database by it without opening the file as a store.
const ApplicationID = catalog.ApplicationID

// Stats is a snapshot of the store's activity counters (since Open, this
// process only) and of its file. An operation inside a transaction is
// counted when it runs, even if the transaction later rolls back; Commits
// and Rollbacks count the transactions themselves.
type Stats struct {
	Puts          uint64 // keys written (puts, TTL puts, batch puts, PutIfAbsent that wrote)
	Gets          uint64 // point reads (Get, Exists, TTL look-ups)
	Hits          uint64 // point reads that found a live key
	Misses        uint64 // point reads that found nothing (or an expired key)
	Deletes       uint64 // keys deleted by Delete and batches
	BytesRead     uint64 // value bytes returned by reads and iterations
	BytesWritten  uint64 // key and value bytes written
	Commits       uint64 // write transactions committed
	Rollbacks     uint64 // write transactions rolled back
	Iterators     uint64 // iterations and cursors opened
	ExpiredOnRead uint64 // expired keys met (and hidden) by reads
	Purged        uint64 // expired keys removed by PurgeExpired
	BusyErrors    uint64 // waits for a connection that ran out of time
	HeldReads     uint64 // reads that reused a read transaction kept open since an earlier read (Options.ReadHold)
	// UnverifiedReads counts rows (and TTL key index rows) that reads
	// returned without a checksum to verify: written by another tool, or in
	// a version-1 store. CheckIntegrity counts the stored ones.
	UnverifiedReads uint64

	ColumnFamilies int   // column families in the store
	PageSize       int64 // bytes per page
	PageCount      int64 // pages in the database
	FreePages      int64 // pages on the free list (reclaimable by vacuum)
	FileSize       int64 // bytes of the database file (0 in memory)
	WALSize        int64 // bytes of the -wal file (0 if none)
	OpenReaders    int   // read connections open now
}

// Stats returns the store's counters and file figures.
func (s *Store) Stats(ctx context.Context) (Stats, error) {
	if err := s.usable(ctx); err != nil {
		return Stats{}, err
	}
	c := &s.db.Stats
	st := Stats{
		Puts: c.Puts.Load(), Gets: c.Gets.Load(), Hits: c.Hits.Load(), Misses: c.Misses.Load(),
		Deletes: c.Deletes.Load(), BytesRead: c.BytesRead.Load(), BytesWritten: c.BytesWritten.Load(),
		Commits: c.Commits.Load(), Rollbacks: c.Rollbacks.Load(), Iterators: c.Iterators.Load(),
		ExpiredOnRead: c.ExpiredOnRead.Load(), Purged: c.Purged.Load(), BusyErrors: c.Busy.Load(),
		HeldReads:       c.HeldReads.Load(),
		UnverifiedReads: c.Unverified.Load(),
	}
	err := s.db.WithReader(ctx, func(c *engine.Conn) error {
		for _, p := range []struct {
			q   string
			dst *int64
		}{
			{"PRAGMA page_size", &st.PageSize},
			{"PRAGMA page_count", &st.PageCount},
			{"PRAGMA freelist_count", &st.FreePages},
		} {
			rows, err := c.Query(ctx, p.q)
			if err != nil {
				return err
			}
			if rows.Next() {
				*p.dst = rows.Int(0)
			}
			if err := rows.Close(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return st, engine.Wrap(ctx, "stats", err)
	}
	names, err := s.ListColumnFamilies()
	if err != nil {
		return st, err
	}
	st.ColumnFamilies = len(names)
	st.OpenReaders = s.db.OpenReaders()
	if s.path != "" {
		if fi, err := os.Stat(s.path); err == nil {
			st.FileSize = fi.Size()
		}
		if fi, err := os.Stat(s.path + "-wal"); err == nil {
			st.WALSize = fi.Size()
		}
	}
	return st, nil
}

package kvstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/snkv-go/snkv/internal/engine"
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
	switch m {
	case CheckpointPassive:
		return "PASSIVE"
	case CheckpointFull:
		return "FULL"
	case CheckpointRestart:
		return "RESTART"
	case CheckpointTruncate:
		return "TRUNCATE"
	}
	return fmt.Sprintf("CheckpointMode(%d)", int(m))
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
	err := s.db.WithWriter(ctx, func(c *engine.Conn) error { return c.ExecScript(ctx, "VACUUM") })
	return engine.Wrap(ctx, "vacuum", err)
}

// Backup writes a consistent copy of the store to the file dest, which must
// not exist, while writers go on. The copy is a compact, self-contained
// snkv store (rollback journal; it switches to WAL when opened).
func (s *Store) Backup(ctx context.Context, dest string) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	return s.db.Backup(ctx, dest)
}

// IntegrityCheck runs SQLite's integrity_check and then snkv's own checks:
// every catalogued column family has its table, and every column family's
// data, key index and expiry index agree. It returns nil for a sound store,
// else an error wrapping ErrCorrupt that lists the problems.
func (s *Store) IntegrityCheck(ctx context.Context) error {
	if err := s.usable(ctx); err != nil {
		return err
	}
	var problems []string
	var names []string
	err := s.db.WithReader(ctx, func(c *engine.Conn) error {
		rows, err := c.Query(ctx, "PRAGMA integrity_check")
		if err != nil {
			return err
		}
		for rows.Next() {
			if line := string(rows.Bytes(0)); line != "ok" {
				problems = append(problems, line)
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		rows, err = c.Query(ctx, `SELECT name, (SELECT count(*) FROM sqlite_schema AS s WHERE s.type = 'table' AND s.name = c.name), c.kind = 'kv' FROM "__snkv_catalog" AS c`)
		if err != nil {
			return err
		}
		for rows.Next() {
			name := string(rows.Bytes(0))
			if rows.Int(1) == 0 {
				problems = append(problems, fmt.Sprintf("column family %q has no table", name))
				continue
			}
			if rows.Int(2) == 1 { // hidden tables of other layers have no TTL state
				names = append(names, name)
			}
		}
		return rows.Close()
	})
	if err != nil {
		return engine.Wrap(ctx, "integrity check", err)
	}
	for _, name := range names {
		cf, err := s.OpenColumnFamily(name)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				continue
			}
			return err
		}
		p, err := cf.CheckTTL(ctx)
		if err != nil {
			return err
		}
		problems = append(problems, p...)
	}
	if len(problems) > 0 {
		return fmt.Errorf("snkv: integrity check: %w: %s", ErrCorrupt, strings.Join(problems, "; "))
	}
	return nil
}

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
		HeldReads: c.HeldReads.Load(),
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

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/spf13/cobra"
)

// purgeChunk is how many expired keys purge removes between progress
// updates; the library commits every 256 keys and checks for cancellation
// between those batches.
const purgeChunk = 4096

// interrupted reports whether err is the cancellation of the command
// (Ctrl-C or SIGTERM).
func interrupted(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

func (a *app) purgeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "purge FILE",
		Short: "Remove expired keys (all column families, or --cf)",
		Long: `Remove the keys whose TTL has passed from every column family, or only
from the one named by --cf. Expired keys are invisible to reads already; a
purge gives their space back. It commits every 256 keys: Ctrl-C stops it at
the next batch boundary, reports what was removed, and leaves the store
consistent.`,
		Example: `  snkv purge app.db
  snkv purge app.db --cf sessions --json`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return a.withStore(args[0], true, func(db *kvstore.Store) error {
				names := []string{a.cf}
				if !cfChanged(cmd) {
					var err error
					if names, err = db.ListColumnFamilies(); err != nil {
						return err
					}
				}
				type job struct {
					cf      *kvstore.ColumnFamily
					expired int64
				}
				var jobs []job
				var todo int64
				cfs, counts, err := openCounted(ctx, db, names)
				if err != nil {
					return err
				}
				for i, kc := range counts {
					jobs = append(jobs, job{cfs[i], kc.Expired})
					todo += kc.Expired
				}
				bar := a.progress(todo, "purging", "keys")
				t := a.table("COLUMN FAMILY", "PURGED")
				var total int64
				var runErr error
				for _, j := range jobs {
					var purged int64
					for {
						n, err := j.cf.PurgeExpiredN(ctx, purgeChunk)
						purged += int64(n)
						bar.add(n)
						if err != nil {
							runErr = err
							break
						}
						if n < purgeChunk {
							break
						}
					}
					total += purged
					if a.json {
						if err := a.emit(map[string]any{"cf": j.cf.Name(), "purged": purged}); err != nil {
							return err
						}
					} else {
						t.row(a.show([]byte(j.cf.Name())), itoa(purged))
					}
					if runErr != nil {
						break
					}
				}
				bar.done()
				if !a.json {
					t.row("total", itoa(total))
					if err := t.flush(); err != nil {
						return err
					}
				}
				if runErr != nil && interrupted(ctx, runErr) {
					return fmt.Errorf("interrupted: %d expired keys were purged before stopping at a batch boundary; the store is consistent", total)
				}
				return runErr
			})
		},
	}
}

func (a *app) statsCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "stats FILE",
		Short:   "Show figures of the store's file and keys (read-only)",
		Example: `  snkv stats app.db`,
		Args:    nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return a.withStore(args[0], false, func(db *kvstore.Store) error {
				st, err := db.Stats(ctx)
				if err != nil {
					return err
				}
				names, err := db.ListColumnFamilies()
				if err != nil {
					return err
				}
				var sum kvstore.KeyCounts
				for _, name := range names {
					kc, err := db.CountKeys(ctx, name)
					if err != nil {
						return err
					}
					sum.Live += kc.Live
					sum.Stored += kc.Stored
					sum.TTL += kc.TTL
					sum.Expired += kc.Expired
				}
				if a.json {
					return a.emit(map[string]any{
						"file": db.Path(), "file_size": st.FileSize, "wal_size": st.WALSize,
						"page_size": st.PageSize, "pages": st.PageCount, "free_pages": st.FreePages,
						"column_families": st.ColumnFamilies, "keys": sum.Live, "stored": sum.Stored,
						"ttl_keys": sum.TTL, "expired": sum.Expired, "encrypted": db.Encrypted(),
					})
				}
				t := a.table()
				for _, r := range [][2]string{
					{"file", db.Path()},
					{"file size", withSize(st.FileSize)},
					{"wal size", withSize(st.WALSize)},
					{"page size", itoa(st.PageSize)},
					{"pages", itoa(st.PageCount)},
					{"free pages", itoa(st.FreePages)},
					{"column families", itoa(int64(st.ColumnFamilies))},
					{"keys", itoa(sum.Live)},
					{"ttl keys", itoa(sum.TTL)},
					{"expired", itoa(sum.Expired)},
					{"encrypted", yesNo(db.Encrypted())},
				} {
					t.row(r[0], r[1])
				}
				return t.flush()
			})
		},
	}
}

func (a *app) checkCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "check FILE",
		Short: "Check the store's integrity: every row's checksum, hidden objects, TTL tables (read-only)",
		Long: `Run SQLite's integrity check on the whole file, then snkv's own checks:
every row's checksum and types, every column family's hidden objects (table,
view, triggers, TTL tables) with the definitions snkv wrote, and the
agreement of each column family's data, key index and expiry index. Prints
"ok" and how many rows it read, verified and found without a checksum
(written by another tool, or a version-1 store: not a problem), or the
problems found and exits 4 ("snkv repair" mends damaged hidden objects).`,
		Example: `  snkv check app.db`,
		Args:    nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(args[0], false, func(db *kvstore.Store) error {
				bar := a.progress(-1, "checking every row", "")
				rep, err := db.CheckIntegrity(cmd.Context())
				bar.done()
				if interrupted(cmd.Context(), err) {
					return interruptedf("interrupted: the check did not finish (it changes nothing)")
				}
				if err != nil {
					return err
				}
				ok := len(rep.Problems) == 0
				if a.json {
					r := map[string]any{"ok": ok, "rows": rep.Rows, "verified": rep.Verified, "unverified": rep.Unverified}
					if !ok {
						r["problems"] = strings.Join(rep.Problems, "; ")
					}
					if jerr := a.emit(r); jerr != nil {
						return jerr
					}
				} else if ok {
					fmt.Fprintf(a.out, "ok: %d rows, %d verified, %d unverified\n", rep.Rows, rep.Verified, rep.Unverified)
				}
				if !ok {
					return damagedError{err: fmt.Errorf("%s: check failed: %s", args[0], strings.Join(rep.Problems, "; "))}
				}
				return nil
			})
		},
	}
}

func (a *app) repairCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "repair FILE",
		Short: "Restore damaged hidden objects (views, triggers, TTL tables, catalog rows)",
		Long: `Mend what "snkv check" reports about hidden objects, in one transaction,
without deleting or changing a data row: put back lost catalog rows,
recreate views and triggers, rebuild a lost TTL table from the other one.
Rows whose checksum fails are not mended. Prints one line per repair.

An encrypted store needs no password or key for it (nothing repair
restores is sealed): given none, repair runs without unlocking the store.`,
		Example: `  snkv repair app.db`,
		Args:    nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			var done []string
			keyless := false
			a.onEncrypted = func() error {
				if flag, err := a.secret.given(); err != nil || flag != "" || a.secret.fromEnv() {
					return err // a secret was given: open with it
				}
				keyless = true
				var err error
				done, err = kvstore.RepairFile(cmd.Context(), path, a.options(false))
				if err != nil {
					return err
				}
				return errRepairedKeyless
			}
			err := a.withStore(path, true, func(db *kvstore.Store) error {
				var err error
				done, err = db.Repair(cmd.Context())
				return err
			})
			if keyless && errors.Is(err, errRepairedKeyless) {
				err = nil
			}
			if err != nil {
				return err
			}
			if a.json {
				if done == nil {
					done = []string{}
				}
				return a.emit(map[string]any{"repairs": done})
			}
			if len(done) == 0 {
				fmt.Fprintln(a.out, "nothing to repair")
			}
			for _, d := range done {
				fmt.Fprintln(a.out, d)
			}
			return nil
		},
	}
}

// errRepairedKeyless ends the open of an encrypted store that repair
// repaired without its secret.
var errRepairedKeyless = errors.New("repaired without the secret")

func (a *app) upgradeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "upgrade FILE",
		Short: "Convert a version-1 store to the current format (checksums, STRICT tables)",
		Long: `Convert a version-1 store to format 2 in small transactions (other
programs may go on using it). Interrupted, it resumes when run again. Does
nothing on a current store.`,
		Example: `  snkv upgrade app.db`,
		Args:    nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(args[0], true, func(db *kvstore.Store) error {
				from, err := db.FormatVersion(cmd.Context())
				if err != nil {
					return err
				}
				bar := a.progress(-1, "upgrading", "")
				err = db.Upgrade(cmd.Context())
				bar.done()
				if err != nil {
					return err
				}
				to, err := db.FormatVersion(cmd.Context())
				if err != nil {
					return err
				}
				if a.json {
					return a.emit(map[string]any{"from": from, "to": to})
				}
				fmt.Fprintf(a.out, "format %d -> %d\n", from, to)
				return nil
			})
		},
	}
}

func (a *app) checkpointCommand() *cobra.Command {
	var mode string
	c := &cobra.Command{
		Use:   "checkpoint FILE",
		Short: "Copy the write-ahead log into the database file",
		Long: `Copy the WAL (FILE-wal) into the database file. --mode passive (default)
copies what it can without waiting; full waits for writers; restart also
waits for readers; truncate then empties the -wal file. A checkpoint held up
by other connections reports busy.`,
		Example: `  snkv checkpoint app.db --mode truncate`,
		Args:    nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			modes := map[string]kvstore.CheckpointMode{
				"passive": kvstore.CheckpointPassive, "full": kvstore.CheckpointFull,
				"restart": kvstore.CheckpointRestart, "truncate": kvstore.CheckpointTruncate,
			}
			m, ok := modes[strings.ToLower(mode)]
			if !ok {
				return usagef("bad --mode %q: want passive, full, restart or truncate", mode)
			}
			return a.withStore(args[0], true, func(db *kvstore.Store) error {
				res, err := db.Checkpoint(cmd.Context(), m)
				if err != nil {
					return err
				}
				if a.json {
					return a.emit(map[string]any{"mode": strings.ToLower(m.String()), "busy": res.Busy, "wal_frames": res.WALFrames, "checkpointed": res.Checkpointed})
				}
				t := a.table("MODE", "BUSY", "WAL FRAMES", "CHECKPOINTED")
				t.row(strings.ToLower(m.String()), fmt.Sprint(res.Busy), itoa(res.WALFrames), itoa(res.Checkpointed))
				return t.flush()
			})
		},
	}
	c.Flags().StringVar(&mode, "mode", "passive", "checkpoint `MODE`: passive, full, restart or truncate")
	return c
}

func (a *app) vacuumCommand() *cobra.Command {
	var incremental int
	c := &cobra.Command{
		Use:   "vacuum FILE",
		Short: "Give free pages back to the file system",
		Long: `Rebuild the file compactly (SQLite's VACUUM: needs free disk space of about
the file's size and holds the write lock throughout). --incremental N only
returns up to N free pages (0: all), which is quick and works on files
created by snkv.`,
		Example: `  snkv vacuum app.db
  snkv vacuum app.db --incremental 0`,
		Args: nargs(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if incremental < -1 {
				return usagef("--incremental must be 0 or more")
			}
			return a.withStore(args[0], true, func(db *kvstore.Store) error {
				before, err := fileSize(args[0])
				if err != nil {
					return err
				}
				bar := a.progress(-1, "vacuuming", "")
				if incremental >= 0 {
					err = db.IncrementalVacuum(ctx, incremental)
				} else {
					err = db.Vacuum(ctx)
				}
				bar.done()
				if err != nil {
					return err
				}
				if _, err := db.Checkpoint(ctx, kvstore.CheckpointTruncate); err != nil {
					return err
				}
				after, err := fileSize(args[0])
				if err != nil {
					return err
				}
				if a.json {
					return a.emit(map[string]any{"size_before": before, "size_after": after})
				}
				t := a.table("SIZE BEFORE", "SIZE AFTER")
				t.row(withSize(before), withSize(after))
				return t.flush()
			})
		},
	}
	c.Flags().IntVar(&incremental, "incremental", -1, "return only up to `N` free pages (0: all) instead of rebuilding")
	return c
}

// yesNo shows a boolean for people.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// humanSize shows a byte count in binary units with three significant
// digits ("43.9 KiB", "1.05 GiB"); below 1 KiB in bytes.
func humanSize(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v := float64(n)
	unit := ""
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"} {
		v /= 1024
		unit = u
		if v < 1024 {
			break
		}
	}
	switch {
	case v < 10:
		return fmt.Sprintf("%.2f %s", v, unit)
	case v < 100:
		return fmt.Sprintf("%.1f %s", v, unit)
	}
	return fmt.Sprintf("%.0f %s", v, unit)
}

// withSize shows a byte count exactly, and in binary units when it is
// 1 KiB or more: "45056 (44.0 KiB)".
func withSize(n int64) string {
	if n < 1024 {
		return itoa(n)
	}
	return fmt.Sprintf("%d (%s)", n, humanSize(n))
}

// fileSize is the size of the file at path.
func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func (a *app) backupCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "backup FILE DEST",
		Short: "Write a consistent copy of the store to a new file (read-only)",
		Long: `Write a compact, consistent copy of the store, as of one snapshot, to the new
file DEST (which must not exist). The store is opened read-only, and an
application writing to it meanwhile is not held up. The copy of an
encrypted store is encrypted as the store is, and opens with the same
password or key (opening the store to copy it needs that secret too).`,
		Example: `  snkv backup app.db /backups/app-2030-01-01.db`,
		Args:    nargs(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := dirExists(args[1]); err != nil {
				return fmt.Errorf("%s: cannot write the backup: %w", args[1], err)
			}
			return a.withStore(args[0], false, func(db *kvstore.Store) error {
				bar := a.progress(-1, "backing up", "")
				err := db.Backup(cmd.Context(), args[1])
				bar.done()
				if errors.Is(err, kvstore.ErrExists) {
					return fmt.Errorf("%s: the backup destination already exists", args[1])
				}
				if err != nil {
					return err
				}
				size, err := fileSize(args[1])
				if err != nil {
					return err
				}
				if a.json {
					return a.emit(map[string]any{"dest": args[1], "size": size})
				}
				t := a.table("DEST", "SIZE")
				t.row(args[1], withSize(size))
				return t.flush()
			})
		},
	}
}

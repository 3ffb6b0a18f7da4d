package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

// timelogTour keeps a small time series in a log: appends out of order,
// a delete, a flush, a snapshot, a range read, compaction with the records
// it drops announced, and the log's statistics.
func timelogTour(ctx context.Context, dir string) error {
	step("a time series: package timelog")
	db, err := kvstore.Open(filepath.Join(dir, "series.db"), kvstore.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	var dropped []timelog.Record
	log, err := timelog.Open(context.Background(), db, "cpu", timelog.Options{
		Maintenance: timelog.Manual,
		OnDrop:      func(r timelog.Record) { dropped = append(dropped, r) },
	})
	if err != nil {
		return err
	}
	fmt.Println(`  log, _ := timelog.Open(ctx, db, "cpu", timelog.Options{Maintenance: timelog.Manual, OnDrop: ...})`)
	// Timestamps in seconds, handles are whatever the caller stores: here
	// a reading in hundredths of a percent.
	batch := []timelog.Record{{Ts: 100, Handle: 1250}, {Ts: 110, Handle: 4310}, {Ts: 105, Handle: 990}, {Ts: 120, Handle: 7700}}
	if err := log.AppendBatch(batch); err != nil {
		return err
	}
	fmt.Printf("  log.AppendBatch(%v)   // out of order is fine\n", batch)
	if err := log.Flush(ctx); err != nil {
		return err
	}
	fmt.Println("  log.Flush(ctx)        // durable: one page row in SQLite")
	if err := log.Append(130, 5000); err != nil {
		return err
	}
	fmt.Println("  log.Append(130, 5000) // buffered")
	snap, err := log.Snapshot()
	if err != nil {
		return err
	}
	if err := log.DeleteBefore(106); err != nil {
		return err
	}
	fmt.Println("  snap := log.Snapshot(); log.DeleteBefore(106)")
	show := func(label string, s *timelog.Snapshot) error {
		fmt.Printf("  %-22s", label)
		for r, err := range s.All() {
			if err != nil {
				return err
			}
			fmt.Printf(" (%d, %d)", r.Ts, r.Handle)
		}
		fmt.Println()
		return nil
	}
	if err := show("snap.All():", snap); err != nil {
		return err
	}
	now, err := log.Snapshot()
	if err != nil {
		return err
	}
	if err := show("a new snapshot:", now); err != nil {
		return err
	}
	n, err := now.CountRange(100, 125)
	if err != nil {
		return err
	}
	fmt.Printf("  CountRange(100, 125): %d\n", n)
	if err := now.Close(); err != nil {
		return err
	}
	if err := snap.Close(); err != nil {
		return err
	}
	if err := log.Flush(ctx); err != nil {
		return err
	}
	log.Compact()
	for {
		did, err := log.MaintStep(ctx)
		if err != nil {
			return err
		}
		if !did {
			break
		}
	}
	fmt.Printf("  after Flush and Compact, OnDrop was told of %v\n", dropped)
	st := log.Stats()
	fmt.Printf("  stats: %d pages, %d stored records, %d deletes, %d flushes, %d compactions\n",
		st.Pages, st.StoredRecords, st.Tombstones, st.Flushes, st.Compactions)
	names, err := timelog.List(context.Background(), db)
	if err != nil {
		return err
	}
	fmt.Printf("  timelog.List(ctx, db): %v; db.ListColumnFamilies() does not show them\n", names)
	fmt.Printf("  its tables: %q, %q, %q (docs/format.md)\n",
		layer.HiddenTableName("timelog", "cpu/pages"), layer.HiddenTableName("timelog", "cpu/tombs"), layer.HiddenTableName("timelog", "cpu/meta"))
	return log.Close()
}

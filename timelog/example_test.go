package timelog_test

import (
	"context"
	"fmt"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
)

func Example() {
	db, err := kvstore.Open("", kvstore.Options{}) // in memory
	if err != nil {
		panic(err)
	}
	defer db.Close()
	events, err := timelog.Open(context.Background(), db, "events", timelog.Options{Maintenance: timelog.Manual})
	if err != nil {
		panic(err)
	}
	if err := events.AppendBatch([]timelog.Record{{Ts: 30, Handle: 3}, {Ts: 10, Handle: 1}, {Ts: 20, Handle: 2}}); err != nil {
		panic(err)
	}
	if err := events.DeleteRange(20, 30); err != nil { // hides (20, 2)
		panic(err)
	}
	if err := events.Append(20, 4); err != nil { // appended after the delete: visible
		panic(err)
	}
	if err := events.Flush(context.Background()); err != nil {
		panic(err)
	}
	for r, err := range events.Range(0, 100) {
		if err != nil {
			panic(err)
		}
		fmt.Println(r.Ts, r.Handle)
	}
	if err := events.Close(); err != nil {
		panic(err)
	}
	// Output:
	// 10 1
	// 20 4
	// 30 3
}

// A bulk load: with the default busy policy an error from a write means it
// was not written, so the plain error check is right. The writes flush on
// their own when the buffers fill (here every 1,000 records), keeping
// memory bounded, even with manual maintenance and no Flush in the loop.
func ExampleLog_AppendBatch() {
	db, err := kvstore.Open("", kvstore.Options{})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	metrics, err := timelog.Open(context.Background(), db, "metrics", timelog.Options{
		Maintenance: timelog.Manual, MemtableMaxBytes: 24 * 1000, SealedMaxRuns: 2,
	})
	if err != nil {
		panic(err)
	}
	load := func() error {
		batch := make([]timelog.Record, 500)
		for t := 0; t < 100_000; t += len(batch) {
			for i := range batch {
				batch[i] = timelog.Record{Ts: int64(t + i), Handle: uint64(t + i)}
			}
			if err := metrics.AppendBatch(batch); err != nil {
				return err // not written: nothing to undo, a retry is safe
			}
		}
		return metrics.Close() // flushes the rest
	}
	if err := load(); err != nil {
		panic(err)
	}
	fmt.Println(metrics.Stats().FlushedRecords)
	// Output:
	// 100000
}

func ExampleLog_In() {
	db, _ := kvstore.Open("", kvstore.Options{})
	defer db.Close()
	orders, _ := timelog.Open(context.Background(), db, "orders", timelog.Options{Maintenance: timelog.Manual})
	defer orders.Close()
	// The record and the key-value write commit together, or not at all.
	err := db.Update(context.Background(), func(tx *kvstore.Tx) error {
		if err := tx.Put([]byte("order/7"), []byte("paid")); err != nil {
			return err
		}
		return orders.In(tx).Append(1700000000, 7)
	})
	fmt.Println(err)
	n, _ := orders.Count()
	fmt.Println(n)
	// Output:
	// <nil>
	// 1
}

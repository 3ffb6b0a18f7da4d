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
	log, err := timelog.Open(db, "events", timelog.Options{Maintenance: timelog.Manual})
	if err != nil {
		panic(err)
	}
	_ = log.AppendBatch([]timelog.Record{{Ts: 30, Handle: 3}, {Ts: 10, Handle: 1}, {Ts: 20, Handle: 2}})
	_ = log.DeleteRange(20, 30) // hides (20, 2)
	_ = log.Append(20, 4)       // appended after the delete: visible
	if err := log.Flush(context.Background()); err != nil {
		panic(err)
	}
	for r, err := range log.Range(0, 100) {
		if err != nil {
			panic(err)
		}
		fmt.Println(r.Ts, r.Handle)
	}
	if err := log.Close(); err != nil {
		panic(err)
	}
	// Output:
	// 10 1
	// 20 4
	// 30 3
}

func ExampleLog_In() {
	db, _ := kvstore.Open("", kvstore.Options{})
	defer db.Close()
	log, _ := timelog.Open(db, "orders", timelog.Options{Maintenance: timelog.Manual})
	defer log.Close()
	// The record and the key-value write commit together, or not at all.
	err := db.Update(context.Background(), func(tx *kvstore.Tx) error {
		if err := tx.Put([]byte("order/7"), []byte("paid")); err != nil {
			return err
		}
		return log.In(tx).Append(1700000000, 7)
	})
	fmt.Println(err)
	n, _ := log.Count()
	fmt.Println(n)
	// Output:
	// <nil>
	// 1
}

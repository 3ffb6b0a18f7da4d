package kvstore_test

import (
	"context"
	"fmt"
	"log"

	"github.com/snkv-go/snkv/iterator"
	"github.com/snkv-go/snkv/kvstore"
)

// Delete a range of keys, and every key with a prefix, each in one
// transaction; a range too large to hold the write lock through goes in
// batches.
func ExampleColumnFamily_DeleteRange() {
	db, err := kvstore.Open("", kvstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, k := range []string{"log:001", "log:002", "log:003", "user:alice", "user:bob", "zed"} {
		if err := db.Put([]byte(k), []byte("v")); err != nil {
			log.Fatal(err)
		}
	}

	n, err := db.DeleteRange(ctx, []byte("log:"), []byte("log:003"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("deleted", n, "of [log:, log:003)")

	prefix := []byte("user:")
	n, err = db.DeleteRange(ctx, prefix, iterator.PrefixEnd(prefix))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("deleted", n, "with the prefix user:")

	n, err = db.DeleteRangeInBatches(ctx, nil, nil, 10_000)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("deleted the other", n)
	// Output:
	// deleted 2 of [log:, log:003)
	// deleted 2 with the prefix user:
	// deleted the other 2
}

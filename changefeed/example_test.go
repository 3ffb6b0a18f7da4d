package changefeed_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/kvstore"
)

// A consumer that resumes where it stopped: it reads from its saved
// position and saves the new one in the same transaction as its own
// writes.
func Example() {
	dir, _ := os.MkdirTemp("", "changefeed")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := kvstore.Open(filepath.Join(dir, "app.db"), kvstore.Options{})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	if err := changefeed.Enable(ctx, db, "default", changefeed.Options{KeepValues: true}); err != nil {
		panic(err)
	}
	_ = db.Put([]byte("user:1"), []byte("ada"))
	_ = db.Put([]byte("user:2"), []byte("alan"))
	_ = db.Delete([]byte("user:1"))

	from, err := changefeed.Load(ctx, db, "indexer")
	if err != nil { // first run: from the start
		from = changefeed.Position{}
	}
	r, _ := changefeed.NewReader(ctx, db, from, changefeed.ReaderOptions{
		Filter: changefeed.Filter{Prefix: []byte("user:")},
	})
	chs, _ := r.Read(ctx)
	for _, c := range chs {
		fmt.Printf("%d %v %s %q\n", c.Seq, c.Op, c.Key, c.Value)
	}
	_ = db.Update(ctx, func(tx *kvstore.Tx) error {
		// ...the consumer's own writes, then its position:
		return changefeed.Commit(tx, "indexer", r.Position())
	})
	p, _ := changefeed.Load(ctx, db, "indexer")
	fmt.Println("next:", p.Seq)
	// Output:
	// 1 put user:1 "ada"
	// 2 put user:2 "alan"
	// 3 delete user:1 ""
	// next: 4
}

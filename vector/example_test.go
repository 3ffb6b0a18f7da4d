package vector_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
)

// An index of documents: vectors with metadata, written in a transaction
// of the store, then searched with a filter.
func Example() {
	dir, _ := os.MkdirTemp("", "vector-example")
	defer os.RemoveAll(dir)
	db, err := kvstore.Open(filepath.Join(dir, "app.db"), kvstore.Options{})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	ctx := context.Background()

	ix, err := vector.Open(ctx, db, "docs", vector.Options{Dim: 3, Metric: vector.Cosine})
	if err != nil {
		panic(err)
	}
	defer ix.Close()

	err = db.Update(ctx, func(tx *kvstore.Tx) error {
		w := ix.In(tx)
		if err := w.Put([]byte("u42/intro"), []float32{0.9, 0.1, 0}, vector.Put{Meta: map[string]string{"lang": "en"}}); err != nil {
			return err
		}
		if err := w.Put([]byte("u42/einleitung"), []float32{0.9, 0.1, 0.05}, vector.Put{Meta: map[string]string{"lang": "de"}}); err != nil {
			return err
		}
		return w.Put([]byte("u7/draft"), []float32{0.8, 0.2, 0}, vector.Put{TTL: time.Hour, Meta: map[string]string{"lang": "en"}})
	})
	if err != nil {
		panic(err)
	}

	hits, err := ix.Search(ctx, []float32{1, 0, 0}, vector.Query{K: 10, Prefix: []byte("u42/"), Where: map[string]string{"lang": "en"}})
	if err != nil {
		panic(err)
	}
	for _, h := range hits {
		fmt.Printf("%s %.4f\n", h.Key, h.Distance)
	}
	// Output:
	// u42/intro 0.0061
}

// Package vector is nearest-neighbour search over float32 vectors kept in a
// kvstore.Store: several named indexes per file, each a few hidden tables
// of the store, with an in-memory HNSW graph for the search.
//
//	ix, err := vector.Open(ctx, db, "docs", vector.Options{Dim: 384, Metric: vector.Cosine})
//	err = db.Update(ctx, func(tx *kvstore.Tx) error {
//		return ix.In(tx).Put(key, vec, vector.Put{TTL: time.Hour, Meta: map[string]string{"lang": "en"}})
//	})
//	hits, err := ix.Search(ctx, q, vector.Query{K: 10, Prefix: []byte("u42/"), Where: map[string]string{"lang": "en"}})
//
// A write lands in the caller's transaction, with everything else it
// writes, and reaches the in-memory graph only when that transaction
// commits: a rolled-back put leaves nothing. Searches see every commit
// made before they start, of this process and of others (each search first
// applies the change log's new entries). A search inside a transaction
// (Tx.Search) sees that transaction's snapshot and its own writes.
//
// Vectors expire on the store's clock (Put.TTL): an expired vector is never
// returned, and PurgeExpired (or Options.PurgeInterval) removes it. Filters
// — a key prefix or range, metadata equality, a Go predicate — are applied
// during the graph search, which becomes an exact scan of the matching
// vectors when they are few: a search returns min(K, matching) results.
//
// The graph's links are saved by a background goroutine in bounded
// transactions of their own; Open loads them and links again only the
// vectors whose links were not saved (after a crash). In an encrypted
// store, vectors, values, metadata and links are sealed; keys stay in the
// clear, as in column families.
//
// docs/vector.md describes the design, its costs and its limits;
// docs/format.md the tables.
package vector

package kvstore_test

import (
	"context"
	"testing"
	"time"
)

// benchRangeKeys is how many keys each DeleteRange run deletes, from the
// middle of the benchN keys of the data set.
const benchRangeKeys = 10_000

// BenchmarkDeleteRange times deleting a range of 10k keys among 100k,
// against the baseline's prepared range DELETE in one transaction on the
// plain table: DeleteRange in one transaction (/snkv), the same range in
// batches of 1,000 (/snkv-batches), and DeleteRange of keys with a TTL,
// whose TTL rows go with them through the triggers (/snkv-ttl). The keys
// are written back, untimed, before each run. keys/s is keys deleted per
// second.
func BenchmarkDeleteRange(b *testing.B) {
	d, s, db := benchPair(b)
	ctx := context.Background()
	ttlCF, err := s.CreateColumnFamily("ttl")
	if err != nil {
		b.Fatal(err)
	}
	benchLoad(b, ttlCF, d, 0, benchN, time.Hour)
	del := benchPrepare(b, db, `DELETE FROM t WHERE key >= ? AND key < ?`)
	lo, hi := benchN/2, benchN/2+benchRangeKeys
	start, end := d.keys[lo], d.keys[hi]
	for _, impl := range []string{"snkv", "snkv-batches", "snkv-ttl", "baseline"} {
		b.Run(impl, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				b.StopTimer()
				switch impl {
				case "baseline":
					tx, err := db.Begin()
					if err != nil {
						b.Fatal(err)
					}
					st := tx.Stmt(benchPrepare(b, db, baseUpsert))
					for i := lo; i < hi; i++ {
						if _, err := st.Exec(d.keys[i], d.value(i)); err != nil {
							b.Fatal(err)
						}
					}
					if err := tx.Commit(); err != nil {
						b.Fatal(err)
					}
				case "snkv-ttl":
					benchLoad(b, ttlCF, d, lo, hi, time.Hour)
				default:
					benchLoad(b, s.Default(), d, lo, hi, 0)
				}
				b.StartTimer()
				var n int64
				var err error
				switch impl {
				case "snkv":
					n, err = s.DeleteRange(ctx, start, end)
				case "snkv-batches":
					n, err = s.DeleteRangeInBatches(ctx, start, end, 1000)
				case "snkv-ttl":
					n, err = ttlCF.DeleteRange(ctx, start, end)
				case "baseline":
					var res interface{ RowsAffected() (int64, error) }
					if res, err = del.Exec(start, end); err == nil {
						n, err = res.RowsAffected()
					}
				}
				if err != nil || n != benchRangeKeys {
					b.Fatalf("deleted %d keys (%v), want %d", n, err, benchRangeKeys)
				}
			}
			b.StopTimer()
			reportKeys(b, b.N*benchRangeKeys)
		})
	}
}

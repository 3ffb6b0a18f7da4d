package changelog

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/engine"
)

// BenchmarkReadBacklog reads a backlog of 100,000 changes (16-byte keys,
// no values or 100-byte values) in pages of 1,024, as a consumer catching
// up does; changes/s is the figure of the target.
func BenchmarkReadBacklog(b *testing.B) {
	for _, vlen := range []int{0, 100} {
		b.Run(fmt.Sprintf("value=%d", vlen), func(b *testing.B) {
			ctx := context.Background()
			db := openDB(b, filepath.Join(b.TempDir(), "s.db"))
			const n = 100_000
			tx, err := db.Begin(ctx, true)
			require.NoError(b, err)
			require.NoError(b, Ensure(ctx, tx.Conn(), 0))
			r := &Recorder{}
			key := make([]byte, 16)
			var val []byte
			if vlen > 0 {
				val = make([]byte, vlen)
			}
			for i := range n {
				key[0], key[1], key[2] = byte(i>>16), byte(i>>8), byte(i)
				_, err := r.Record(ctx, tx, "cf", OpPut, key, val, NoExpiry)
				require.NoError(b, err)
			}
			require.NoError(b, tx.Commit())
			b.ResetTimer()
			for b.Loop() {
				got := 0
				require.NoError(b, db.WithReader(ctx, func(c *engine.Conn) error {
					from := int64(1)
					for {
						chs, next, err := ReadFiltered(ctx, c, from, Filter{}, 1024)
						if err != nil {
							return err
						}
						got += len(chs)
						if len(chs) == 0 {
							return nil
						}
						from = next
					}
				}))
				if got != n {
					b.Fatalf("read %d changes, want %d", got, n)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "changes/s")
		})
	}
}

package kvstore_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// BenchmarkPurgeIdlePass measures what the default background purge costs
// when it has nothing to do: one PurgeExpiredAll pass over a store with
// 10 or 100 column families, half of them with 1,000 live TTL keys, none
// expired. The baseline is the least the same question can cost in plain
// SQL: one prepared look at the head of each TTL column family's expiry
// index, through database/sql, on the same file. docs/ttl.md carries the
// figures.
func BenchmarkPurgeIdlePass(b *testing.B) {
	ctx := context.Background()
	for _, cfs := range []int{10, 100} {
		dir := b.TempDir()
		s := benchOpenStore(b, dir, "purge.db", kvstore.Options{PurgeInterval: -1})
		var ttlCFs []string
		for i := range cfs {
			name := fmt.Sprintf("cf%03d", i)
			cf, err := s.CreateColumnFamily(name)
			require.NoError(b, err)
			var bt kvstore.Batch
			for k := range 1000 {
				if i%2 == 0 {
					bt.PutTTL(fmt.Appendf(nil, "k%04d", k), []byte("v"), time.Hour)
				} else {
					bt.Put(fmt.Appendf(nil, "k%04d", k), []byte("v"))
				}
			}
			require.NoError(b, cf.Apply(ctx, &bt))
			if i%2 == 0 {
				ttlCFs = append(ttlCFs, name)
			}
		}
		cpuRun(b, fmt.Sprintf("cfs=%d/snkv", cfs), func(b *testing.B) {
			for b.Loop() {
				n, err := s.PurgeExpiredAll(ctx)
				require.NoError(b, err)
				require.Zero(b, n)
			}
		})
		cpuRun(b, fmt.Sprintf("cfs=%d/baseline", cfs), func(b *testing.B) {
			raw, err := sql.Open("sqlite", "file:"+filepath.ToSlash(filepath.Join(dir, "purge.db"))+"?mode=ro")
			require.NoError(b, err)
			defer raw.Close()
			raw.SetMaxOpenConns(1)
			var stmts []*sql.Stmt
			for _, name := range ttlCFs {
				st, err := raw.Prepare(`SELECT count(*) FROM (SELECT 1 FROM "__snkv_ttl_e__` + name + `" WHERE expire_ms <= ? LIMIT 256)`)
				require.NoError(b, err)
				stmts = append(stmts, st)
			}
			now := binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixMilli()))
			for b.Loop() {
				for _, st := range stmts {
					var n int
					require.NoError(b, st.QueryRow(now).Scan(&n))
					require.Zero(b, n)
				}
			}
		})
	}
}

// BenchmarkPurgeNothingExpired measures one PurgeExpired of a column family
// of 10,000 live TTL keys with nothing expired: quiet, nothing committed
// since the last purge (answered from the column family's horizon); and
// after-commit, a put of a new value into another column family between
// purges (one read
// of the head of the expiry index, in a held read transaction; the put is
// outside the timer). docs/ttl.md carries the figures.
func BenchmarkPurgeNothingExpired(b *testing.B) {
	ctx := context.Background()
	s := benchOpenStore(b, b.TempDir(), "purge.db", kvstore.Options{PurgeInterval: -1})
	cf, err := s.CreateColumnFamily("ttl")
	require.NoError(b, err)
	other, err := s.CreateColumnFamily("other")
	require.NoError(b, err)
	var bt kvstore.Batch
	for k := range 10000 {
		bt.PutTTL(fmt.Appendf(nil, "k%05d", k), []byte("v"), time.Hour)
	}
	require.NoError(b, cf.Apply(ctx, &bt))
	purge := func(b *testing.B) {
		n, err := cf.PurgeExpired(ctx)
		require.NoError(b, err)
		require.Zero(b, n)
	}
	b.Run("quiet", func(b *testing.B) {
		for b.Loop() {
			purge(b)
		}
	})
	b.Run("after-commit", func(b *testing.B) {
		i := 0
		for b.Loop() {
			b.StopTimer()
			i++
			require.NoError(b, other.Put(fmt.Appendf(nil, "o%d", i%100), fmt.Appendf(nil, "v%d", i)))
			b.StartTimer()
			purge(b)
		}
	})
}

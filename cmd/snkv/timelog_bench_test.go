package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/timelog"
	"github.com/stretchr/testify/require"
)

// benchRecords is the number of records each timelog benchmark iteration
// reads.
const benchRecords = 200_000

// BenchmarkTimelogRange compares `snkv timelog range --json` and the table
// form (run in-process: open read-only, one snapshot, one line per record)
// with the same read made directly through the library (read-only open,
// Range over the snapshot), in the same run.
func BenchmarkTimelogRange(b *testing.B) {
	path := filepath.Join(b.TempDir(), "s.db")
	db, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(b, err)
	l, err := timelog.Open(context.Background(), db, "cpu", timelog.Options{Maintenance: timelog.Manual})
	require.NoError(b, err)
	batch := make([]timelog.Record, benchRecords)
	for i := range batch {
		batch[i] = timelog.Record{Ts: t0ms + int64(i)*10, Handle: uint64(i)}
	}
	require.NoError(b, l.AppendBatch(batch))
	require.NoError(b, l.Close())
	require.NoError(b, db.Close())

	for _, form := range []struct{ name, flag string }{{"snkv-json", "--json"}, {"snkv-table", "--limit=0"}} {
		b.Run(form.name, func(b *testing.B) {
			for range b.N {
				if code := run([]string{"timelog", "range", path, "cpu", form.flag}, nil, io.Discard, io.Discard); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
			b.ReportMetric(float64(benchRecords*b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
	b.Run("library", func(b *testing.B) {
		for range b.N {
			db, err := kvstore.Open(path, kvstore.Options{ReadOnly: true})
			require.NoError(b, err)
			l, err := timelog.Open(context.Background(), db, "cpu", timelog.Options{ReadOnly: true})
			require.NoError(b, err)
			s, err := l.SnapshotContext(context.Background())
			require.NoError(b, err)
			n := 0
			for _, err := range s.Since(-1 << 63) {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			require.Equal(b, benchRecords, n)
			require.NoError(b, s.Close())
			require.NoError(b, l.Close())
			require.NoError(b, db.Close())
		}
		b.ReportMetric(float64(benchRecords*b.N)/b.Elapsed().Seconds(), "records/s")
	})
}

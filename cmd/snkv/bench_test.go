package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// benchKeys is the number of keys each benchmark iteration moves.
const benchKeys = 20_000

// benchInput is an export of benchKeys keys, half of them with a TTL.
func benchInput() []byte {
	var b bytes.Buffer
	exp := t0.Add(24 * time.Hour).UnixMilli()
	for i := range benchKeys {
		if i%2 == 0 {
			fmt.Fprintf(&b, `{"cf":"default","key":"key:%07d","value":"value number %d","expire_ms":%d}`+"\n", i, i, exp+int64(i))
		} else {
			fmt.Fprintf(&b, `{"cf":"default","key":"key:%07d","value":"value number %d"}`+"\n", i, i)
		}
	}
	return b.Bytes()
}

// BenchmarkImport compares `snkv import` (run in-process: JSON decoding,
// one transaction) with the same writes made directly through the library,
// in the same run.
func BenchmarkImport(b *testing.B) {
	in := benchInput()
	b.Setenv(nowEnv, t0.Format(time.RFC3339))
	b.Run("snkv-import", func(b *testing.B) {
		for range b.N {
			path := filepath.Join(b.TempDir(), "s.db")
			if code := run([]string{"import", path, "--create"}, bytes.NewReader(in), io.Discard, io.Discard); code != 0 {
				b.Fatalf("exit %d", code)
			}
		}
		b.ReportMetric(float64(benchKeys*b.N)/b.Elapsed().Seconds(), "keys/s")
	})
	b.Run("library", func(b *testing.B) {
		exp := t0.Add(24 * time.Hour)
		for range b.N {
			db, err := kvstore.Open(filepath.Join(b.TempDir(), "s.db"), kvstore.Options{Clock: kvstore.NewManualClock(t0)})
			require.NoError(b, err)
			require.NoError(b, db.Update(context.Background(), func(tx *kvstore.Tx) error {
				for i := range benchKeys {
					k, v := []byte(fmt.Sprintf("key:%07d", i)), []byte(fmt.Sprintf("value number %d", i))
					var err error
					if i%2 == 0 {
						err = tx.PutExpireAt(k, v, exp.Add(time.Duration(i)*time.Millisecond))
					} else {
						err = tx.Put(k, v)
					}
					if err != nil {
						return err
					}
				}
				return nil
			}))
			require.NoError(b, db.Close())
		}
		b.ReportMetric(float64(benchKeys*b.N)/b.Elapsed().Seconds(), "keys/s")
	})
}

// BenchmarkExport compares `snkv export` (in-process) with a library scan
// that reads every key's TTL too, in the same run.
func BenchmarkExport(b *testing.B) {
	b.Setenv(nowEnv, t0.Format(time.RFC3339))
	path := filepath.Join(b.TempDir(), "s.db")
	if code := run([]string{"import", path, "--create"}, bytes.NewReader(benchInput()), io.Discard, io.Discard); code != 0 {
		b.Fatalf("exit %d", code)
	}
	b.Run("snkv-export", func(b *testing.B) {
		for range b.N {
			if code := run([]string{"export", path}, nil, io.Discard, io.Discard); code != 0 {
				b.Fatalf("exit %d", code)
			}
		}
		b.ReportMetric(float64(benchKeys*b.N)/b.Elapsed().Seconds(), "keys/s")
	})
	b.Run("library", func(b *testing.B) {
		for range b.N {
			db, err := kvstore.Open(path, kvstore.Options{ReadOnly: true, Clock: kvstore.NewManualClock(t0)})
			require.NoError(b, err)
			n := 0
			require.NoError(b, db.View(context.Background(), func(tx *kvstore.Tx) error {
				for e, err := range tx.All() {
					if err != nil {
						return err
					}
					if _, err := tx.TTL(e.Key); err != nil {
						return err
					}
					n++
				}
				return nil
			}))
			require.Equal(b, benchKeys, n)
			require.NoError(b, db.Close())
		}
		b.ReportMetric(float64(benchKeys*b.N)/b.Elapsed().Seconds(), "keys/s")
	})
}

package kvstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// Column families dropped and created while a conversion runs: the
// conversion finishes (a dropped one has nothing left to convert; it is
// not a table missing from the file) and every value that is left reads.
func TestConversionWithColumnFamiliesDroppedMeanwhile(t *testing.T) {
	skipSealedSuite(t)
	ctx := context.Background()
	for _, op := range []string{"encrypt", "rekey", "remove encryption"} {
		t.Run(op, func(t *testing.T) {
			var enc *kvstore.Encryption
			if op != "encrypt" {
				enc = pw("a")
			}
			path := tempPath(t)
			s := openAt(t, path, kvstore.Options{Encryption: enc, UpgradeBatch: 5})
			const families, rows = 20, 500
			for c := range families {
				cf, err := s.CreateColumnFamily(fmt.Sprintf("cf%02d", c))
				require.NoError(t, err)
				require.NoError(t, s.Update(ctx, func(tx *kvstore.Tx) error {
					for i := range rows {
						if err := tx.CF(cf).Put(fmt.Appendf(nil, "k%04d", i), []byte("value")); err != nil {
							return err
						}
					}
					return nil
				}))
			}
			first := rawValue(t, path, "cf00", []byte("k0000"))
			done := make(chan error, 1)
			go func() {
				switch op {
				case "encrypt":
					done <- s.Encrypt(ctx, *pw("a"))
				case "rekey":
					done <- s.Rekey(ctx, *pw("b"))
				default:
					done <- s.RemoveEncryption(ctx)
				}
			}()
			// Once the conversion is in the first column family (it has
			// listed them all), drop from the end, where it has not been
			// yet, and create others.
			for bytes.Equal(rawValue(t, path, "cf00", []byte("k0000")), first) {
				select {
				case err := <-done:
					t.Fatalf("the conversion ended (%v) before it converted a value", err)
				case <-time.After(time.Millisecond):
				}
			}
			var ddl []error
			for c := families - 1; c >= families/2; c-- {
				ddl = append(ddl, s.DropColumnFamily(fmt.Sprintf("cf%02d", c)))
				cf, err := s.CreateColumnFamily(fmt.Sprintf("new%02d", c))
				if err == nil {
					err = cf.Put([]byte("x"), []byte("new value"))
				}
				ddl = append(ddl, err)
			}
			require.NoError(t, <-done)
			require.NoError(t, errors.Join(ddl...))
			rep, err := s.CheckIntegrity(ctx)
			require.NoError(t, err)
			require.Empty(t, rep.Problems)
			for c := range families / 2 {
				cf, err := s.OpenColumnFamily(fmt.Sprintf("cf%02d", c))
				require.NoError(t, err)
				require.Len(t, contents(t, cf), rows)
			}
		})
	}
}

// A conversion called while another runs waits for it, but no longer than
// its context allows: it then returns the context's error and changes
// nothing.
func TestConversionWaitingForAnotherHonoursItsContext(t *testing.T) {
	skipSealedSuite(t)
	path := tempPath(t)
	s := openAt(t, path, kvstore.Options{UpgradeBatch: 5})
	require.NoError(t, s.Update(context.Background(), func(tx *kvstore.Tx) error {
		for i := range 50_000 {
			if err := tx.Put(fmt.Appendf(nil, "k%06d", i), []byte("value")); err != nil {
				return err
			}
		}
		return nil
	}))
	done := make(chan error, 1)
	go func() { done <- s.Encrypt(context.Background(), *pw("a")) }()
	for !s.Encrypted() {
		select {
		case err := <-done:
			t.Fatalf("the encryption ended (%v) before it began", err)
		case <-time.After(time.Millisecond):
		}
	}
	for _, second := range []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"Rekey", func(ctx context.Context) error { return s.Rekey(ctx, *pw("b")) }},
		{"RemoveEncryption", s.RemoveEncryption},
		{"Encrypt", func(ctx context.Context) error { return s.Encrypt(ctx, *pw("c")) }},
		{"FinishConversion", s.FinishConversion},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		err := second.run(ctx)
		cancel()
		select {
		case first := <-done:
			t.Fatalf("%s returned (%v) only once the running encryption had ended (%v), past its deadline", second.name, err, first)
		default:
		}
		require.ErrorIs(t, err, context.DeadlineExceeded, second.name)
	}
	require.NoError(t, <-done)
	require.NoError(t, s.Close())
	s = openAt(t, path, kvstore.Options{Encryption: pw("a")})
	require.Len(t, contents(t, s.Default()), 50_000)
}

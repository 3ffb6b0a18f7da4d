package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// damageStart is the fixed clock of every damage test: expiries and
// remaining TTLs are exact.
var damageStart = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// damageCell is what the model expects of one key.
type damageCell struct {
	Value string
	TTL   time.Duration // kvstore.NoTTL for a permanent key
}

// damageModel is the content of the damage tests' store, by column family.
type damageModel map[string]map[string]damageCell

// buildDamageStore writes a small store (512-byte pages, so that many
// pages hold few rows; rollback journal, so that the file is the whole
// store) with three column families, TTL keys among them, and returns its
// bytes and its content.
func buildDamageStore(t testing.TB, rows int) ([]byte, damageModel) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src.db")
	db, err := kvstore.Open(path, kvstore.Options{PageSize: 512, Journal: kvstore.JournalDelete, Clock: kvstore.NewManualClock(damageStart)})
	require.NoError(t, err)
	model := damageModel{}
	for c, name := range []string{kvstore.DefaultColumnFamily, "users", "sessions"} {
		cf, err := db.ColumnFamilyOrCreate(name)
		require.NoError(t, err)
		model[name] = map[string]damageCell{}
		for i := range rows {
			k := fmt.Sprintf("%s:%03d", name[:1], i)
			v := fmt.Sprintf("value %d of %s %s", i, name, bytes.Repeat([]byte{'a' + byte(i%26)}, (i*13+c*7)%90))
			cell := damageCell{Value: v, TTL: kvstore.NoTTL}
			if name == "sessions" && i%2 == 0 {
				cell.TTL = time.Duration(i+1) * time.Hour
				require.NoError(t, cf.PutTTL([]byte(k), []byte(v), cell.TTL))
			} else {
				require.NoError(t, cf.Put([]byte(k), []byte(v)))
			}
			model[name][k] = cell
		}
	}
	require.NoError(t, db.IntegrityCheck(context.Background()))
	require.NoError(t, db.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data, model
}

// Outcomes of reading a damaged store.
const (
	outRefused  = "refused at open"            // Open failed
	outRead     = "detected by a read"         // some read returned an error
	outCheck    = "detected by IntegrityCheck" // reads exact, the check reported it
	outHarmless = "no effect on any result"    // reads exact, check clean
)

// classifyDamage opens the store at path read-only and reads everything:
// every key by Get and GetTTL, every column family by a full scan, and the
// integrity check. It returns the outcome, or an error for the one thing
// that must never happen: a read that returns a value (or a missing key, or
// a TTL) other than the model's without an error, where the integrity check
// does not report the damage either.
func classifyDamage(path string, model damageModel) (string, error) {
	ctx := context.Background()
	db, err := kvstore.Open(path, kvstore.Options{ReadOnly: true, Journal: kvstore.JournalDelete, Clock: kvstore.NewManualClock(damageStart), BusyTimeout: time.Second})
	if err != nil {
		return outRefused, nil
	}
	defer db.Close()
	checkErr := db.IntegrityCheck(ctx)
	readErr := false
	var wrong, missing []string
	names := make([]string, 0, len(model))
	for name := range model {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		cells := model[name]
		cf, err := db.OpenColumnFamily(name)
		if err != nil {
			readErr = true
			continue
		}
		for k, want := range cells {
			v, d, err := cf.GetTTL([]byte(k))
			switch {
			case errors.Is(err, kvstore.ErrNotFound):
				missing = append(missing, name+"/"+k)
			case err != nil:
				readErr = true
			case string(v) != want.Value || d != want.TTL:
				wrong = append(wrong, fmt.Sprintf("%s/%s: got %q ttl %v, want %q ttl %v", name, k, v, d, want.Value, want.TTL))
			}
		}
		seen := 0
		for e, err := range cf.All() {
			if err != nil {
				readErr = true
				break
			}
			want, ok := cells[string(e.Key)]
			if !ok || string(e.Value) != want.Value {
				wrong = append(wrong, fmt.Sprintf("%s: scan returned key %q value %q", name, e.Key, e.Value))
			}
			seen++
		}
		if seen < len(cells) && !readErr {
			missing = append(missing, fmt.Sprintf("%s: scan returned %d of %d keys", name, seen, len(cells)))
		}
	}
	switch {
	case len(wrong) > 0:
		return "", fmt.Errorf("a read returned a changed result without an error: %v (integrity check: %v)", wrong, checkErr)
	case len(missing) > 0 && checkErr == nil:
		return "", fmt.Errorf("keys went missing without an error and the integrity check passed: %v", missing)
	case readErr || len(missing) > 0:
		return outRead, nil
	case checkErr != nil:
		return outCheck, nil
	}
	return outHarmless, nil
}

// TestByteFlips inverts each byte of a small store in turn (every byte
// without -short, every 4th under -race, every 61st under -short) and checks that each flip is
// detected or leaves every result exact. The counts are in docs/testing.md.
func TestByteFlips(t *testing.T) {
	data, model := buildDamageStore(t, 12)
	stride := 1
	switch {
	case testing.Short():
		stride = 61
	case raceEnabled:
		stride = 4 // every byte takes about 15 minutes under -race
	}
	dir := t.TempDir()
	counts := map[string]int{}
	for off := 0; off < len(data); off += stride {
		path := filepath.Join(dir, fmt.Sprintf("flip%d.db", off))
		bad := bytes.Clone(data)
		bad[off] ^= 0xFF
		require.NoError(t, os.WriteFile(path, bad, 0o600))
		out, err := classifyDamage(path, model)
		require.NoError(t, err, "byte %d (page %d, offset %d in the page) inverted", off, off/512+1, off%512)
		counts[out]++
		require.NoError(t, os.Remove(path))
		_ = os.Remove(path + "-journal")
	}
	t.Logf("%d bytes (%d pages of 512), %d flipped: %v", len(data), len(data)/512, (len(data)+stride-1)/stride, counts)
}

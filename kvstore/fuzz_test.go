package kvstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// fuzzAlphabet is what fuzzed keys are made of: few symbols, so that keys
// collide often, with the bytes that stress ordering and prefix bounds.
var fuzzAlphabet = []byte{0x00, 0x01, 'a', 'b', 0x7f, 0x80, 0xfe, 0xff}

// fuzzOps reads a program of store operations from fuzz input.
type fuzzOps struct{ data []byte }

func (p *fuzzOps) byte() (byte, bool) {
	if len(p.data) == 0 {
		return 0, false
	}
	b := p.data[0]
	p.data = p.data[1:]
	return b, true
}

// key reads a key of 0 to 3 symbols; an empty key tests the error path.
func (p *fuzzOps) key() []byte {
	n, _ := p.byte()
	k := make([]byte, 0, 3)
	for range int(n % 4) {
		c, _ := p.byte()
		k = append(k, fuzzAlphabet[int(c)%len(fuzzAlphabet)])
	}
	return k
}

// fuzzModel is what the store must hold: values and expiries (ms; absent
// for a permanent key).
type fuzzModel struct {
	vals map[string]string
	exp  map[string]int64
}

func (m *fuzzModel) live(now int64) model {
	out := model{}
	for k, v := range m.vals {
		if e, ok := m.exp[k]; ok && e <= now {
			continue
		}
		out[k] = v
	}
	return out
}

// FuzzStoreModel runs random programs of puts, TTL puts, deletes, expiry
// changes, clock moves, purges, point reads and iterations against an
// in-memory store and a map model, and checks that they agree after every
// read and that the store passes its integrity check at the end.
func FuzzStoreModel(f *testing.F) {
	f.Add([]byte{0, 1, 2, 1, 1, 1, 2, 3, 5, 1, 2, 2})
	f.Add([]byte{1, 3, 7, 7, 7, 40, 4, 9, 6, 0, 7, 2, 7, 7})
	f.Add([]byte{1, 2, 6, 6, 9, 3, 8, 250, 4, 200, 5, 7, 1, 6})
	f.Add([]byte{2, 1, 0, 3, 1, 0, 30, 6, 2, 5, 7, 1, 0, 8})
	f.Fuzz(runStoreProgram)
}

// runStoreProgram runs one fuzzed program; see FuzzStoreModel.
func runStoreProgram(t *testing.T, data []byte) {
	if len(data) > 512 {
		data = data[:512]
	}
	ctx := context.Background()
	clk := kvstore.NewManualClock(time.UnixMilli(1_700_000_000_000))
	// One goroutine never waits for itself: a short busy timeout turns
	// any such wait into a failure instead of a stall.
	db, err := kvstore.Open("", kvstore.Options{Clock: clk, BusyTimeout: 100 * time.Millisecond})
	require.NoError(t, err)
	defer db.Close()
	m := &fuzzModel{vals: map[string]string{}, exp: map[string]int64{}}
	now := func() int64 { return clk.Now().UnixMilli() }
	p := &fuzzOps{data: data}
	for step := 0; ; step++ {
		op, ok := p.byte()
		if !ok {
			break
		}
		k := p.key()
		v := string(rune('A' + step%26))
		switch op % 9 {
		case 0: // Put
			err := db.Put(k, []byte(v))
			if len(k) == 0 {
				require.ErrorIs(t, err, kvstore.ErrInvalidKey)
				continue
			}
			require.NoError(t, err)
			m.vals[string(k)] = v
			delete(m.exp, string(k))
		case 1: // PutTTL
			d, _ := p.byte()
			err := db.PutTTL(k, []byte(v), time.Duration(d%50)*time.Millisecond)
			switch {
			case len(k) == 0:
				require.ErrorIs(t, err, kvstore.ErrInvalidKey)
			case d%50 == 0:
				require.ErrorIs(t, err, kvstore.ErrInvalidTTL)
			default:
				require.NoError(t, err)
				m.vals[string(k)] = v
				m.exp[string(k)] = now() + int64(d%50)
			}
		case 2: // Delete
			err := db.Delete(k)
			if len(k) == 0 {
				require.ErrorIs(t, err, kvstore.ErrInvalidKey)
				continue
			}
			if _, live := m.live(now())[string(k)]; live {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, kvstore.ErrNotFound)
			}
			delete(m.vals, string(k))
			delete(m.exp, string(k))
		case 3: // Expire / Persist
			d, _ := p.byte()
			_, live := m.live(now())[string(k)]
			if d%2 == 0 {
				err = db.Persist(k)
			} else {
				err = db.Expire(k, time.Duration(d%40+1)*time.Millisecond)
			}
			switch {
			case len(k) == 0:
				require.ErrorIs(t, err, kvstore.ErrInvalidKey)
			case !live:
				require.ErrorIs(t, err, kvstore.ErrNotFound)
				delete(m.vals, string(k))
				delete(m.exp, string(k))
			case d%2 == 0:
				require.NoError(t, err)
				delete(m.exp, string(k))
			default:
				require.NoError(t, err)
				m.exp[string(k)] = now() + int64(d%40+1)
			}
		case 4: // the clock moves
			d, _ := p.byte()
			clk.Advance(time.Duration(d%30) * time.Millisecond)
		case 5: // purge
			n, err := db.PurgeExpired(ctx)
			require.NoError(t, err)
			expired := 0
			for key, e := range m.exp {
				if e <= now() {
					expired++
					delete(m.vals, key)
					delete(m.exp, key)
				}
			}
			// Reads may have deleted some expired keys already.
			require.LessOrEqual(t, n, expired)
		case 6: // point read
			got, err := db.Get(k)
			if len(k) == 0 {
				require.ErrorIs(t, err, kvstore.ErrInvalidKey)
				continue
			}
			want, live := m.live(now())[string(k)]
			if live {
				require.NoError(t, err)
				require.Equal(t, want, string(got))
			} else {
				require.True(t, errors.Is(err, kvstore.ErrNotFound), "get %x: %v", k, err)
			}
		case 7, 8: // an iteration: prefix, bounds and direction from the input
			flags, _ := p.byte()
			opts := kvstore.IterOptions{Reverse: flags&1 != 0}
			if flags&2 != 0 {
				opts.Prefix = k
			}
			if flags&4 != 0 {
				opts.Start = p.key()
			}
			if flags&8 != 0 {
				opts.End = p.key()
			}
			require.Equal(t, m.live(now()).selectKeys(opts), collect(t, db.Scan(opts)), "scan %+v", opts)
		}
	}
	require.Equal(t, m.live(now()).sorted(), contents(t, db.Default()))
	require.NoError(t, db.IntegrityCheck(ctx))
}

package changefeed_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/snkv-go/snkv/changefeed"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// 100 readers tailing the head of one store (they share the latest
// changes they read) each receive every change once, in order, and the
// filtered ones exactly their changes, while lone puts, transactions and
// deletes commit.
func TestHundredReadersAtTheHeadReceiveEveryChangeOnce(t *testing.T) {
	s, _, _ := openStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{KeepValues: true}))
	from, err := changefeed.Now(ctx, s)
	require.NoError(t, err)

	prefixes := []string{"", "a/", "b/"}
	type result struct {
		evs  []ev
		seqs []int64
		err  error
	}
	results := make([]result, 100)
	var wg sync.WaitGroup
	for i := range results {
		p := prefixes[i%3]
		r, err := changefeed.NewReader(ctx, s, from, changefeed.ReaderOptions{Filter: changefeed.Filter{Prefix: []byte(p)}, Batch: 1 + i%7})
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := &results[i]
			for {
				ch, err := r.Next(ctx)
				if err != nil {
					res.err = err
					return
				}
				res.evs = append(res.evs, evOf(ch))
				res.seqs = append(res.seqs, ch.Seq)
				if string(ch.Key) == p+"end" {
					return
				}
			}
		}()
	}
	var want []ev // the committed history, in order
	put := func(tx *kvstore.Tx, k string) {
		if tx == nil {
			require.NoError(t, s.Put([]byte(k), []byte("v"+k)))
		} else {
			require.NoError(t, tx.Put([]byte(k), []byte("v"+k)))
		}
		want = append(want, ev{Op: "put", CF: "default", Key: k, Value: "v" + k, Expiry: -1})
	}
	for i := range 60 {
		put(nil, fmt.Sprintf("a/%d", i))
		require.NoError(t, s.Update(ctx, func(tx *kvstore.Tx) error {
			for j := range 3 {
				put(tx, fmt.Sprintf("b/%d.%d", i, j))
			}
			return nil
		}))
		if i%10 == 9 {
			require.NoError(t, s.Delete([]byte(fmt.Sprintf("a/%d", i))))
			want = append(want, ev{Op: "delete", CF: "default", Key: fmt.Sprintf("a/%d", i), Expiry: -1})
		}
	}
	require.NoError(t, s.Update(ctx, func(tx *kvstore.Tx) error {
		for _, k := range []string{"a/end", "b/end", "end"} {
			put(tx, k)
		}
		return nil
	}))
	wg.Wait()
	for i, res := range results {
		require.NoError(t, res.err, "reader %d", i)
		p := prefixes[i%3]
		var wantP []ev
		var wantSeqs []int64
		for j, e := range want {
			if strings.HasPrefix(e.Key, p) {
				wantP = append(wantP, e)
				wantSeqs = append(wantSeqs, from.Seq+int64(j))
			}
		}
		require.Equal(t, wantP, res.evs, "reader %d (prefix %q)", i, p)
		require.Equal(t, wantSeqs, res.seqs, "reader %d (prefix %q)", i, p)
	}
}

// A reader whose position is behind a trim gets ErrCompacted, naming the
// oldest change held, though the readers of its process have the trimmed
// changes in memory: whether the trim ran in this process or in another
// (another handle on the file).
func TestReaderBehindATrimIsCompactedWithTheCacheWarm(t *testing.T) {
	for _, elsewhere := range []bool{false, true} {
		t.Run(fmt.Sprintf("elsewhere=%v", elsewhere), func(t *testing.T) {
			s, _, path := openStore(t)
			ctx := context.Background()
			require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{MaxCount: 2}))
			start, err := changefeed.Now(ctx, s)
			require.NoError(t, err)
			// A reader at the head, then every change: they are in memory.
			warm, err := changefeed.NewReader(ctx, s, start, changefeed.ReaderOptions{})
			require.NoError(t, err)
			chs, err := warm.Read(ctx)
			require.NoError(t, err)
			require.Empty(t, chs)
			for i := range 5 {
				require.NoError(t, s.Put(fmt.Appendf(nil, "k%d", i), []byte("v")))
			}
			chs, err = warm.Read(ctx)
			require.NoError(t, err)
			require.Len(t, chs, 5)
			behind, err := changefeed.NewReader(ctx, s, start, changefeed.ReaderOptions{})
			require.NoError(t, err)

			trimmer := s
			if elsewhere {
				trimmer, err = kvstore.Open(path, kvstore.Options{})
				require.NoError(t, err)
				defer trimmer.Close()
			}
			n, err := changefeed.Trim(ctx, trimmer, 0, true)
			require.NoError(t, err)
			require.EqualValues(t, 3, n)

			_, err = behind.Read(ctx)
			var ce *changefeed.CompactedError
			require.ErrorAs(t, err, &ce)
			require.EqualValues(t, start.Seq+3, ce.Oldest)
			_, err = behind.Next(ctx)
			require.ErrorIs(t, err, changefeed.ErrCompacted)

			// A reader at the oldest change held reads on.
			r, err := changefeed.NewReader(ctx, s, changefeed.Position{Epoch: start.Epoch, Seq: ce.Oldest}, changefeed.ReaderOptions{})
			require.NoError(t, err)
			chs, err = r.Read(ctx)
			require.NoError(t, err)
			require.Len(t, chs, 2)
			require.Equal(t, "k4", string(chs[1].Key))
		})
	}
}

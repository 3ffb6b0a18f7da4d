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

// 100 readers tailing the head while four writers commit as fast as they
// can (the readers are woken at most once per wake-up interval, and each
// wake-up reads every change committed since) each receive every change
// once, in order: exactly the log's history from their position, the
// filtered ones exactly their prefix's part of it. Their poll of the file
// is an hour: a wake-up lost by this process would hang them.
func TestHundredReadersUnderAStreamOfCommitsReceiveEveryChangeOnce(t *testing.T) {
	s, _, _ := openStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{}))
	from, err := changefeed.Now(ctx, s)
	require.NoError(t, err)

	const writers, perWriter = 4, 300
	prefixes := []string{"", "w0/", "w3/"}
	type result struct {
		seqs []int64
		keys []string
		err  error
	}
	results := make([]result, 100)
	var wg sync.WaitGroup
	for i := range results {
		p := prefixes[i%3]
		r, err := changefeed.NewReader(ctx, s, from, changefeed.ReaderOptions{Filter: changefeed.Filter{Prefix: []byte(p)}, Batch: 1 + i%5, Poll: time.Hour})
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := &results[i]
			want := perWriter * writers
			if p != "" {
				want = perWriter
			}
			for len(res.keys) < want {
				ch, err := r.Next(ctx)
				if err != nil {
					res.err = err
					return
				}
				res.seqs = append(res.seqs, ch.Seq)
				res.keys = append(res.keys, string(ch.Key))
			}
		}()
	}
	var ww sync.WaitGroup
	for w := range writers {
		ww.Add(1)
		go func() {
			defer ww.Done()
			for i := range perWriter {
				if err := s.Put(fmt.Appendf(nil, "w%d/%04d", w, i), []byte("v")); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	ww.Wait()
	wg.Wait()

	// The history as the log holds it, read in one pass.
	all, err := changefeed.NewReader(ctx, s, from, changefeed.ReaderOptions{})
	require.NoError(t, err)
	var hist []changefeed.Change
	for {
		chs, err := all.Read(ctx)
		require.NoError(t, err)
		if len(chs) == 0 {
			break
		}
		hist = append(hist, chs...)
	}
	require.Len(t, hist, writers*perWriter)
	for i, res := range results {
		require.NoError(t, res.err, "reader %d", i)
		p := prefixes[i%3]
		var seqs []int64
		var keys []string
		for j, c := range hist {
			require.Equal(t, from.Seq+int64(j), c.Seq, "the log's history has no gap")
			if strings.HasPrefix(string(c.Key), p) {
				seqs = append(seqs, c.Seq)
				keys = append(keys, string(c.Key))
			}
		}
		require.Equal(t, keys, res.keys, "reader %d (prefix %q)", i, p)
		require.Equal(t, seqs, res.seqs, "reader %d (prefix %q)", i, p)
	}
}

// A lone commit on a quiet store reaches a waiting reader through the
// commit hook at once: with the reader's poll of the file at an hour, the
// wake-up can only come from the commit (the coalescing of wake-ups, see
// changelog.WakeInterval, holds back only a commit that follows a
// wake-up closely; internal/changelog's tests check it delivers a commit
// after a quiet spell at once).
func TestLoneCommitOnAQuietStoreWakesAReaderAtOnce(t *testing.T) {
	s, _, _ := openStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{}))
	from, err := changefeed.Now(ctx, s)
	require.NoError(t, err)
	r, err := changefeed.NewReader(ctx, s, from, changefeed.ReaderOptions{Poll: time.Hour})
	require.NoError(t, err)
	for i := range 5 {
		got := make(chan changefeed.Change, 1)
		errs := make(chan error, 1)
		go func() {
			ch, err := r.Next(ctx)
			if err != nil {
				errs <- err
				return
			}
			got <- ch
		}()
		time.Sleep(5 * time.Millisecond) // the store is quiet and the reader waits
		key := fmt.Sprintf("k%d", i)
		require.NoError(t, s.Put([]byte(key), []byte("v")))
		select {
		case ch := <-got:
			require.Equal(t, key, string(ch.Key))
		case err := <-errs:
			t.Fatal(err)
		case <-time.After(20 * time.Second):
			t.Fatal("the commit did not wake the reader")
		}
	}
}

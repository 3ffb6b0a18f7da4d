package changefeed_test

import (
	"context"
	"fmt"
	"path/filepath"
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
	s, ctx, from := feedAtNow(t, changefeed.Options{KeepValues: true})

	prefixes := []string{"", "a/", "b/"}
	wait := hundredReaders(t, ctx, s, from, prefixes,
		func(i int) changefeed.ReaderOptions { return changefeed.ReaderOptions{Batch: 1 + i%7} },
		func(p string, got []changefeed.Change) bool { return string(got[len(got)-1].Key) == p+"end" })
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
	for i, got := range wait() {
		p := prefixes[i%3]
		var wantP, evs []ev
		var wantSeqs, seqs []int64
		for j, e := range want {
			if strings.HasPrefix(e.Key, p) {
				wantP = append(wantP, e)
				wantSeqs = append(wantSeqs, from.Seq+int64(j))
			}
		}
		for _, ch := range got {
			evs, seqs = append(evs, evOf(ch)), append(seqs, ch.Seq)
		}
		require.Equal(t, wantP, evs, "reader %d (prefix %q)", i, p)
		require.Equal(t, wantSeqs, seqs, "reader %d (prefix %q)", i, p)
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
	s, ctx, from := feedAtNow(t, changefeed.Options{})

	const writers, perWriter = 4, 300
	prefixes := []string{"", "w0/", "w3/"}
	wait := hundredReaders(t, ctx, s, from, prefixes,
		func(i int) changefeed.ReaderOptions {
			return changefeed.ReaderOptions{Batch: 1 + i%5, Poll: time.Hour}
		},
		func(p string, got []changefeed.Change) bool {
			return p == "" && len(got) == perWriter*writers || p != "" && len(got) == perWriter
		})
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
	received := wait()

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
	for i, got := range received {
		p := prefixes[i%3]
		var seqs, gotSeqs []int64
		var keys, gotKeys []string
		for _, ch := range got {
			gotSeqs, gotKeys = append(gotSeqs, ch.Seq), append(gotKeys, string(ch.Key))
		}
		for j, c := range hist {
			require.Equal(t, from.Seq+int64(j), c.Seq, "the log's history has no gap")
			if strings.HasPrefix(string(c.Key), p) {
				seqs = append(seqs, c.Seq)
				keys = append(keys, string(c.Key))
			}
		}
		require.Equal(t, keys, gotKeys, "reader %d (prefix %q)", i, p)
		require.Equal(t, seqs, gotSeqs, "reader %d (prefix %q)", i, p)
	}
}

// The key and value of a change a Reader returns are the caller's: the
// readers of a store's head share the changes they read, and one that
// writes over or appends to what it received changes nothing another
// reader receives, nor what it receives next.
func TestReadersAtTheHeadOwnTheirBytes(t *testing.T) {
	s, ctx, from := feedAtNow(t, changefeed.Options{KeepValues: true})
	a, err := changefeed.NewReader(ctx, s, from, changefeed.ReaderOptions{})
	require.NoError(t, err)
	b, err := changefeed.NewReader(ctx, s, from, changefeed.ReaderOptions{})
	require.NoError(t, err)
	// A first change read by both: the reads map the file's WAL index,
	// without which the readers do not share (each reads through SQL).
	require.NoError(t, s.Put([]byte("k0"), []byte("vk0")))
	for _, r := range []*changefeed.Reader{a, b} {
		ch, err := r.Next(ctx)
		require.NoError(t, err)
		require.Equal(t, "k0", string(ch.Key))
	}
	require.NoError(t, s.Update(ctx, func(tx *kvstore.Tx) error {
		for _, k := range []string{"k1", "k2", "k3"} {
			if err := tx.Put([]byte(k), []byte("v"+k)); err != nil {
				return err
			}
		}
		return nil
	}))
	var got []string
	for range 3 {
		ch, err := a.Next(ctx)
		require.NoError(t, err)
		got = append(got, string(ch.Key)+"="+string(ch.Value))
		_ = append(ch.Key, "XXXXXXXX"...)
		_ = append(ch.Value, "XXXXXXXX"...)
		ch.Key[0], ch.Value[0] = 'X', 'X'
	}
	require.Equal(t, []string{"k1=vk1", "k2=vk2", "k3=vk3"}, got, "what a reader received next")
	chs, err := b.Read(ctx)
	require.NoError(t, err)
	got = got[:0]
	for _, ch := range chs {
		got = append(got, string(ch.Key)+"="+string(ch.Value))
	}
	require.Equal(t, []string{"k1=vk1", "k2=vk2", "k3=vk3"}, got, "what another reader received")
}

// A lone commit on a quiet store reaches a waiting reader through the
// commit hook at once: with the reader's poll of the file at an hour, the
// wake-up can only come from the commit (the coalescing of wake-ups, see
// changelog.WakeInterval, holds back only a commit that follows a
// wake-up closely; internal/changelog's tests check it delivers a commit
// after a quiet spell at once).
func TestLoneCommitOnAQuietStoreWakesAReaderAtOnce(t *testing.T) {
	s, ctx, from := feedAtNow(t, changefeed.Options{})
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

// hundredReaders starts 100 readers of s from from, reader i filtered by
// the prefix prefixes[i%len(prefixes)], with the options opts(i); each
// calls Next until done(its prefix, what it received) or an error. wait
// waits for them all, fails the test on a reader's error, and returns what
// each received.
func hundredReaders(t *testing.T, ctx context.Context, s *kvstore.Store, from changefeed.Position, prefixes []string,
	opts func(i int) changefeed.ReaderOptions, done func(prefix string, got []changefeed.Change) bool) (wait func() [][]changefeed.Change) {
	t.Helper()
	got := make([][]changefeed.Change, 100)
	errs := make([]error, 100)
	var wg sync.WaitGroup
	for i := range got {
		p := prefixes[i%len(prefixes)]
		o := opts(i)
		o.Filter = changefeed.Filter{Prefix: []byte(p)}
		r, err := changefeed.NewReader(ctx, s, from, o)
		require.NoError(t, err)
		wg.Go(func() {
			for len(got[i]) == 0 || !done(p, got[i]) {
				ch, err := r.Next(ctx)
				if err != nil {
					errs[i] = err
					return
				}
				got[i] = append(got[i], ch)
			}
		})
	}
	return func() [][]changefeed.Change {
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "reader %d", i)
		}
		return got
	}
}

// feedAtNow opens a store with a feed on its default column family and
// returns it, a context that ends with the test (a minute at most), and
// the feed's position now.
func feedAtNow(t *testing.T, o changefeed.Options) (*kvstore.Store, context.Context, changefeed.Position) {
	t.Helper()
	s, _, _ := openStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	require.NoError(t, changefeed.Enable(ctx, s, "default", o))
	from, err := changefeed.Now(ctx, s)
	require.NoError(t, err)
	return s, ctx, from
}

// Of the readers of one handle that wait, one looks at the file for
// another process's commits and wakes the others: when the caller of the
// reader that looked stops calling Next, the others still receive the
// next commits of another handle, whichever of them led.
func TestReadersSeeOtherProcessesCommitsWhenALeaderStops(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "o.db")
	s, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	w, err := kvstore.Open(path, kvstore.Options{}) // another process, for s's readers
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{}))
	from, err := changefeed.Now(ctx, s)
	require.NoError(t, err)
	const n = 8
	got := make(chan int, 4*n)
	for i := range n {
		r, err := changefeed.NewReader(ctx, s, from, changefeed.ReaderOptions{Poll: time.Millisecond})
		require.NoError(t, err)
		go func() {
			// Reader i stops after its i-th change (0: never).
			for k := 1; ; k++ {
				c, err := r.Next(ctx)
				if err != nil {
					return
				}
				got <- int(c.Seq)
				if k == i {
					return
				}
			}
		}()
	}
	for k := 1; k <= 5; k++ {
		require.NoError(t, w.Put(fmt.Appendf(nil, "k%d", k), []byte("v")))
		for range n - (k - 1) { // readers 1 to k-1 have stopped

			select {
			case <-got:
			case <-time.After(10 * time.Second):
				t.Fatalf("commit %d: a reader was not woken", k)
			}
		}
	}
}

// The same when the reader that looked stops because its context ends:
// the readers waiting for it are woken, and one of them looks instead.
func TestReadersSeeOtherProcessesCommitsWhenALeaderTimesOut(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "o.db")
	s, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	w, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	require.NoError(t, changefeed.Enable(ctx, s, "default", changefeed.Options{}))
	from, err := changefeed.Now(ctx, s)
	require.NoError(t, err)
	reader := func() *changefeed.Reader {
		r, err := changefeed.NewReader(ctx, s, from, changefeed.ReaderOptions{Poll: time.Millisecond})
		require.NoError(t, err)
		return r
	}
	// The first readers to wait (one of them leads) give up after 100 ms.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	for range 3 {
		r := reader()
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := r.Next(short)
			require.ErrorIs(t, err, context.DeadlineExceeded)
		}()
	}
	time.Sleep(20 * time.Millisecond) // they wait before the others
	got := make(chan int64, 3)
	for range 3 {
		r := reader()
		go func() {
			if c, err := r.Next(ctx); err == nil {
				got <- c.Seq
			}
		}()
	}
	wg.Wait()
	require.NoError(t, w.Put([]byte("k"), []byte("v")))
	for range 3 {
		select {
		case seq := <-got:
			require.Equal(t, from.Seq, seq)
		case <-time.After(10 * time.Second):
			t.Fatal("a reader was not woken")
		}
	}
}

// Of the readers of one handle, some leave while commits stream, their
// contexts ended or closed from another goroutine, whether they wait for
// the leader's wake-up, lead, or read: the readers that stay receive
// every change all the same, and those closed while they waited return
// once woken. Their poll of the file is an hour: a wake-up lost with a
// reader that left would hang the others.
func TestReadersLeavingDuringAStreamLeaveNoReaderWaiting(t *testing.T) {
	s, ctx, from := feedAtNow(t, changefeed.Options{})
	const stay, leave, puts = 20, 20, 400
	type reader struct {
		r      *changefeed.Reader
		cancel context.CancelFunc
	}
	var leavers []reader
	var wg sync.WaitGroup
	done := make(chan int, stay)
	for i := range stay + leave {
		r, err := changefeed.NewReader(ctx, s, from, changefeed.ReaderOptions{Poll: time.Hour, Batch: 1 + i%3})
		require.NoError(t, err)
		rctx, cancel := context.WithCancel(ctx)
		t.Cleanup(cancel)
		if i >= stay {
			leavers = append(leavers, reader{r, cancel})
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := from.Seq
			for {
				c, err := r.Next(rctx)
				if err != nil {
					if i < stay {
						t.Errorf("reader %d: %v", i, err)
					}
					return
				}
				if c.Seq != want {
					t.Errorf("reader %d: change %d, want %d", i, c.Seq, want)
					return
				}
				if want++; i < stay && want == from.Seq+puts {
					done <- i
					return
				}
			}
		}()
	}
	for k := range puts {
		require.NoError(t, s.Put(fmt.Appendf(nil, "k%04d", k), []byte("v")))
		if k%(puts/leave) == puts/leave/2 {
			l := leavers[0]
			leavers = leavers[1:]
			if len(leavers)%2 == 0 {
				l.cancel()
			} else {
				require.NoError(t, l.r.Close())
			}
		}
	}
	for range stay {
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("a reader that stayed was not woken for the last changes")
		}
	}
	// The readers closed while they waited return once woken.
	require.NoError(t, s.Put([]byte("last"), []byte("v")))
	wg.Wait()
}

// Readers that wait for the leader end with their own context, each at
// once, whether it ended before or during the wait, and the others go on
// receiving; a context per call, or a reader closed with its context
// live, leaves nothing behind.
func TestWaitingReadersEndWithTheirContexts(t *testing.T) {
	s, ctx, from := feedAtNow(t, changefeed.Options{})
	const n = 6
	type result struct {
		i   int
		err error
	}
	ctxs := make([]context.Context, n)
	cancels := make([]context.CancelFunc, n)
	readers := make([]*changefeed.Reader, n)
	for i := range n {
		ctxs[i], cancels[i] = context.WithCancel(ctx)
		defer cancels[i]()
		r, err := changefeed.NewReader(ctx, s, from, changefeed.ReaderOptions{})
		require.NoError(t, err)
		readers[i] = r
	}
	ended := make(chan result, n)
	got := make([]chan changefeed.Change, n)
	for i := range n {
		got[i] = make(chan changefeed.Change, 16)
		go func() {
			for {
				ch, err := readers[i].Next(ctxs[i])
				if err != nil {
					ended <- result{i, err}
					return
				}
				got[i] <- ch
			}
		}()
	}
	time.Sleep(20 * time.Millisecond) // every reader waits, one of them as the leader
	for _, i := range []int{1, 4} {
		cancels[i]()
		select {
		case res := <-ended:
			require.Equal(t, i, res.i)
			require.ErrorIs(t, res.err, context.Canceled)
		case <-time.After(5 * time.Second):
			t.Fatalf("reader %d did not end with its context", i)
		}
	}
	require.NoError(t, s.Put([]byte("k"), []byte("v")))
	for i := range n {
		if i == 1 || i == 4 {
			continue
		}
		select {
		case ch := <-got[i]:
			require.Equal(t, "k", string(ch.Key))
		case <-time.After(5 * time.Second):
			t.Fatalf("reader %d did not receive the commit", i)
		}
	}
	// A context that ended before the call: what is there is returned,
	// and the wait after it ends at once.
	ch, err := readers[1].Next(ctxs[1])
	require.NoError(t, err)
	require.Equal(t, "k", string(ch.Key))
	_, err = readers[1].Next(ctxs[1])
	require.ErrorIs(t, err, context.Canceled)
	// A new context per call, each ended by the next commit's delivery.
	r, err := changefeed.NewReader(ctx, s, from, changefeed.ReaderOptions{})
	require.NoError(t, err)
	for i := range 3 {
		c, cancel := context.WithCancel(ctx)
		ch, err := r.Next(c)
		cancel()
		require.NoError(t, err)
		require.Equal(t, "k", string(ch.Key), i)
		if i < 2 {
			require.NoError(t, s.Put([]byte("k"), []byte("v")))
		}
	}
	require.NoError(t, r.Close())
	for i := range n {
		require.NoError(t, readers[i].Close())
		cancels[i]() // a closed reader's watch is stopped (TestReaderEndsWatch)
	}
}

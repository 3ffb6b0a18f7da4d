package changelog

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/snkv-go/snkv/internal/engine"
)

// Publish extends the window only with the changes of the one commit
// after the window's state, starting right after its last change: after
// two commits (another transaction committed before the publishing one
// looked at the mark), with changes the window holds already, or twice,
// it changes nothing and the readers read the file as before. A read
// after a publication is served without a refresh.
func TestPublishOnlyTheNextCommit(t *testing.T) {
	r := newPublishRig(t)
	db, pc, n, put, logged := r.db, &r.pc, &r.n, r.put, r.logged
	read := r.mustRead
	require.Len(t, read().Chs, 1)

	put("b")
	put("c")
	require.False(t, pc.Publish(db, n, logged(2)[:1], 2), "two commits since the window")
	require.Len(t, read().Chs, 3, "refreshed through SQL")

	put("d")
	require.False(t, pc.Publish(db, n, logged(3), 4), "changes the window holds")
	d := logged(4)
	require.True(t, pc.Publish(db, n, d, 2))
	require.False(t, pc.Publish(db, n, d, 2), "nothing committed since the window")
	fills := pc.Fills()
	cr := read()
	require.Equal(t, fills, pc.Fills(), "no refresh")
	require.Equal(t, logged(1), cr.Chs)
	require.Equal(t, int64(5), cr.Next)
}

// A commit whose Publish comes while a refresh is under way is queued and
// extends the window the refresh makes, once it ends, when it is the one
// commit after the refresh's state; one the refresh read already is
// skipped; one that does not follow (another commit came between) stops
// the queue, and the readers refresh again.
func TestPublishDuringARefreshExtendsItsWindow(t *testing.T) {
	ctx := context.Background()
	r := newPublishRig(t)
	db, pc, n, put, logged, open := r.db, &r.pc, &r.n, r.put, r.logged, r.open
	read := r.mustRead
	require.Len(t, read().Chs, 1)
	// during runs body as the refresh under way: the publications in it
	// are queued until the refresh made from the file's state at its
	// point read ends.
	during := func(before, after func()) {
		pc.mu.Lock()
		fill := pc.fills.Add(1)
		pc.filling = make(chan struct{})
		prev := pc.cur.Load()
		pc.mu.Unlock()
		before()
		w, err := refresh(ctx, db, n, open, prev, 1)
		require.NoError(t, err)
		after()
		pc.mu.Lock()
		pc.refreshed(w, fill)
		pc.mu.Unlock()
	}

	refreshes, pubs := pc.Refreshes(), pc.Publications()
	during(func() {
		put("b") // committed before the refresh reads: it reads b
		require.False(t, pc.Publish(db, n, logged(2), 2), "queued")
	}, func() {
		put("c") // committed after
		require.False(t, pc.Publish(db, n, logged(3), 2), "queued")
		put("d")
		require.False(t, pc.Publish(db, n, logged(4), 2), "queued")
	})
	require.Equal(t, refreshes+1, pc.Refreshes())
	require.Equal(t, pubs+2, pc.Publications(), "c and d")
	pubs = pc.Publications()
	cr := read()
	require.Equal(t, refreshes+1, pc.Refreshes(), "c and d extended the refresh's window: no refresh")
	require.Equal(t, logged(1), cr.Chs)
	require.Equal(t, int64(5), cr.Next)

	during(func() {}, func() {
		put("e")
		put("f") // two commits since the refresh's state: f does not follow it
		require.False(t, pc.Publish(db, n, logged(6), 2), "queued")
	})
	require.Equal(t, pubs, pc.Publications())
	require.Len(t, read().Chs, 6, "refreshed through SQL")
	require.Equal(t, refreshes+3, pc.Refreshes())
}

// A reader that finds the file's mark moved by the commit of this
// process's write transaction (Land) waits for its Publish instead of
// reading the file: the window the commit extends serves it, with no
// refresh. A commit that is not that transaction's (the window's mark is
// not the one it began at) is read through SQL, and a wait ends with its
// context.
func TestReadWaitsForTheCommitOfThisProcess(t *testing.T) {
	ctx := context.Background()
	r := newPublishRig(t)
	db, pc, n, put, logged, read := r.db, &r.pc, &r.n, r.put, r.logged, r.read
	cr, err := read(ctx)
	require.NoError(t, err)
	require.Len(t, cr.Chs, 1)
	refreshes := pc.Refreshes()

	land := pc.Land(db) // as the writer's transaction does at its first change
	put("b")            // its commit
	got := waitingRead(t, ctx, read)
	require.True(t, pc.Publish(db, n, logged(2), 2))
	pc.EndLand(land)
	cr = <-got
	require.Equal(t, logged(1), cr.Chs)
	require.Equal(t, refreshes, pc.Refreshes(), "no refresh")

	put("c") // another commit: no transaction of this process began at the window's mark
	land = pc.Land(db)
	cr, err = read(ctx)
	require.NoError(t, err)
	require.Len(t, cr.Chs, 3)
	require.Equal(t, refreshes+1, pc.Refreshes(), "read through SQL")

	put("d") // the landing transaction's commit, never published
	cctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	_, err = read(cctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	pc.EndLand(land)
	cr, err = read(ctx)
	require.NoError(t, err)
	require.Len(t, cr.Chs, 4, "the landing ended: read through SQL")
}

// publishRig is the set-up of the tests of Publish: a store with the log
// and one change ("a") committed, its WAL index mapped, and a PageCache
// and Notifier of its own.
type publishRig struct {
	t  *testing.T
	db *engine.DB
	pc PageCache
	n  Notifier
}

func newPublishRig(t *testing.T) *publishRig {
	r := &publishRig{t: t, db: testDB(t)}
	setup(t, r.db)
	r.put("a")
	c, err := r.db.AcquireSnapshot(context.Background(), engine.ReadPinned) // maps the WAL index
	require.NoError(t, err)
	r.db.ReleaseSnapshot(c)
	return r
}

// put commits a put of key k into column family x.
func (r *publishRig) put(k string) {
	fill(r.t, r.db, Change{CF: "x", Op: OpPut, Key: []byte(k), Value: []byte("v"), ExpiryMs: NoExpiry})
}

// logged reads the log from sequence from through SQL.
func (r *publishRig) logged(from int64) []Change {
	var chs []Change
	require.NoError(r.t, r.db.WithReader(context.Background(), func(c *engine.Conn) error {
		var err error
		chs, err = Read(context.Background(), c, from, 100)
		return err
	}))
	return chs
}

// open opens nothing: the rig's changes are in the clear.
func (r *publishRig) open(context.Context, *engine.Conn, []Change) error { return nil }

// read reads every change from sequence 1 through the PageCache.
func (r *publishRig) read(ctx context.Context) (CacheRead, error) {
	return r.pc.Read(ctx, r.db, &r.n, r.open, Position{Seq: 1}, Filter{}.Matcher(), 100, 0, false)
}

// mustRead is read, which must serve from the PageCache.
func (r *publishRig) mustRead() CacheRead {
	cr, err := r.read(context.Background())
	require.NoError(r.t, err)
	require.True(r.t, cr.OK)
	return cr
}

// A landing replaced by the next transaction's (the first's hooks come
// after the next writer began) wakes the readers waiting for it, and its
// late end leaves the new one in place.
func TestLandReplacedWakesItsReaders(t *testing.T) {
	ctx := context.Background()
	r := newPublishRig(t)
	db, pc, put, read := r.db, &r.pc, r.put, r.read
	_, err := read(ctx)
	require.NoError(t, err)
	refreshes := pc.Refreshes()
	first := pc.Land(db)
	require.NotZero(t, first)
	put("b")
	got := waitingRead(t, ctx, read)
	second := pc.Land(db) // the next transaction, before the first's hooks
	require.NotEqual(t, first, second)
	select {
	case cr := <-got:
		require.Len(t, cr.Chs, 2)
		require.Equal(t, refreshes+1, pc.Refreshes(), "read through SQL")
	case <-time.After(5 * time.Second):
		t.Fatal("the replaced landing kept its reader waiting")
	}
	pc.EndLand(first)
	pc.landMu.Lock()
	require.Equal(t, second, pc.landGen, "a late end leaves the next landing")
	pc.landMu.Unlock()
	pc.EndLand(second)
	pc.landMu.Lock()
	require.Zero(t, pc.landGen)
	pc.landMu.Unlock()
}

// A reader that goes on with what it has not read (cont) takes it from
// the window as it is, without waiting for this process's commit on its
// way and without a refresh: the window is older than the file (Stale).
// At the window's end it looks at the file as before.
func TestReadGoingOnServesTheWindowAsItIs(t *testing.T) {
	ctx := context.Background()
	r := newPublishRig(t)
	db, pc, n, put := r.db, &r.pc, &r.n, r.put
	put("b")
	cr := r.mustRead() // a window of a and b
	require.Len(t, cr.Chs, 2)
	refreshes := pc.Refreshes()
	land := pc.Land(db)
	put("c") // the landing transaction's commit, not published yet
	all := Filter{}.Matcher()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cr, err := pc.Read(cctx, db, n, r.open, Position{Seq: 2}, all, 100, 0, true)
	require.NoError(t, err)
	require.True(t, cr.OK)
	require.True(t, cr.Stale)
	require.Equal(t, []int64{2}, seqs(cr.Chs))
	require.Equal(t, int64(3), cr.Next)
	require.Equal(t, refreshes, pc.Refreshes(), "no refresh")
	// Past the window's end: the landing is waited for, as before.
	short, cancel2 := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel2()
	_, err = pc.Read(short, db, n, r.open, Position{Seq: 3}, all, 100, 0, true)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.True(t, pc.Publish(db, n, r.logged(3), 1))
	pc.EndLand(land)
	cr, err = pc.Read(ctx, db, n, r.open, Position{Seq: 3}, all, 100, 0, true)
	require.NoError(t, err)
	require.Equal(t, []int64{3}, seqs(cr.Chs))
	require.Equal(t, refreshes, pc.Refreshes(), "no refresh")
}

// waitingRead starts read in a goroutine, checks that it waits (for the
// commit's changes), and returns the channel its result comes on.
func waitingRead(t *testing.T, ctx context.Context, read func(context.Context) (CacheRead, error)) <-chan CacheRead {
	t.Helper()
	got := make(chan CacheRead, 1)
	go func() {
		cr, err := read(ctx)
		assert.NoError(t, err)
		got <- cr
	}()
	select {
	case <-got:
		t.Fatal("the read did not wait for the commit's changes")
	case <-time.After(20 * time.Millisecond):
	}
	return got
}

package changelog

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/internal/seal"
)

// FeedsTable lists the column families whose changes are recorded, with
// each feed's options (docs/format.md). A feed belongs to the name: it
// outlives a drop of the column family, so a consumer sees the drop and a
// later creation of the same name.
const FeedsTable = "__snkv_changelog_feeds"

// The row 'changefeed' of __snkv_meta holds a value bumped by every change
// of FeedsTable (bumpSQL): a writer reads it once per write transaction
// (genSQL) and reloads the feeds only when it moved, so another process's
// Enable or Disable is seen by the next transaction; a lone write checks it
// in its own statement (layout.Queries.FeedsGen, layout.FeedsGenRow).
const (
	feedsSQL = `CREATE TABLE IF NOT EXISTS "__snkv_changelog_feeds" (
	cf TEXT PRIMARY KEY NOT NULL,
	keep_values INTEGER NOT NULL,
	max_count INTEGER NOT NULL,
	max_age_ms INTEGER NOT NULL,
	max_bytes INTEGER NOT NULL DEFAULT 0
) STRICT, WITHOUT ROWID`
	// A feeds table made before retention by bytes lacks max_bytes: the
	// first SetFeed adds it, and until then the feeds are read without it.
	hasBytesSQL   = `SELECT count(*) FROM pragma_table_info('__snkv_changelog_feeds') WHERE name = 'max_bytes'`
	addBytesSQL   = `ALTER TABLE "__snkv_changelog_feeds" ADD COLUMN max_bytes INTEGER NOT NULL DEFAULT 0`
	feedsAllV1SQL = `SELECT cf, keep_values, max_count, max_age_ms, 0 FROM "__snkv_changelog_feeds" ORDER BY cf`
	genSQL        = `SELECT value FROM "__snkv_meta" WHERE name = 'changefeed'`
	bumpSQL       = `INSERT INTO "__snkv_meta" (name, value) VALUES ('changefeed', 1) ON CONFLICT (name) DO UPDATE SET value = value + 1`
	feedsAllSQL   = `SELECT cf, keep_values, max_count, max_age_ms, max_bytes FROM "__snkv_changelog_feeds" ORDER BY cf`
	feedSetSQL    = `INSERT INTO "__snkv_changelog_feeds" (cf, keep_values, max_count, max_age_ms, max_bytes) VALUES (?, ?, ?, ?, ?) ON CONFLICT (cf) DO UPDATE SET keep_values = excluded.keep_values, max_count = excluded.max_count, max_age_ms = excluded.max_age_ms, max_bytes = excluded.max_bytes`
	feedDelSQL    = `DELETE FROM "__snkv_changelog_feeds" WHERE cf = ?`
)

// Config is one column family's feed: its options as stored.
type Config struct {
	CF         string // the column family's name as the catalog stores it
	KeepValues bool   // a put's change carries its value
	Retention  Retention
}

// Feeds is a store's recording state: its Recorder, the Notifier its
// commits fire, and the feeds as the current write transaction found them.
// The write paths call Record for every change; a store or a column family
// without a feed pays a comparison per write and one read of a meta row per
// write transaction.
//
// The cached state belongs to the store's writer: only the goroutine that
// holds it (one write transaction at a time) calls For and Record, and no
// transaction hook touches it, since hooks run as the next writer starts.
type Feeds struct {
	Rec Recorder
	_   pad // the writer's alone; Notify is read by the readers
	// Notify and Pages are padded within: what the readers write is on
	// lines of its own.
	Notify Notifier
	// Pages is the latest changes as this process's readers read them
	// (shared by them; its own lock).
	Pages PageCache
	// Seal returns the store's encryption state now (nil, or a nil
	// result: the store is in the clear). A kept value is sealed under its
	// Write key, as the store seals a row's value, and opened on reading
	// (OpenValues).
	Seal func() *seal.State
	// Followed returns the state the store followed with an encryption
	// header as stored in the file (nil: never, or no encryption): a read
	// whose snapshot began before a conversion ended opens its kept values
	// with its snapshot's keys (OpenValues).
	Followed func(header []byte) *seal.State

	tx   *engine.Tx // the write transaction the cache was checked in
	none bool       // no feed at all (the common case: one comparison)
	gen  int64      // the meta row's value the set was loaded at (-1: never)
	set  map[string]*Config
	// lastCF's feed in set, when lastOK (set replaces it): the answer
	// to For's usual question, without hashing the name.
	lastOK   bool
	lastCF   string
	lastConf *Config
	fire     *engine.Tx // the transaction whose commit fires Notify
	pend     *pending   // fire's changes, kept for Pages (nil: not kept)
	arena    []byte     // where pend's keys and values are copied (clone)
}

// NewFeeds returns the recording state of a store whose clock is now.
func NewFeeds(now func() int64) *Feeds {
	return &Feeds{Rec: Recorder{Now: now}, gen: -1}
}

// For returns cf's feed as the write transaction tx sees it, nil when cf
// has none. The feeds are read once per transaction (the meta row's
// generation, and the table only when that moved).
func (fs *Feeds) For(ctx context.Context, tx *engine.Tx, cf string) (*Config, error) {
	if fs.tx != tx {
		if err := fs.load(ctx, tx); err != nil {
			return nil, err
		}
	}
	if fs.none {
		return nil, nil
	}
	if fs.lastOK && fs.lastCF == cf {
		return fs.lastConf, nil
	}
	conf := fs.set[cf]
	fs.lastOK, fs.lastCF, fs.lastConf = true, cf, conf
	return conf, nil
}

// Loaded returns, for a write outside a transaction by the goroutine that
// holds the store's writer, the feeds' generation this store last loaded
// (-1: never, which no generation matches; nil: fs is nil, and records
// nothing) and whether cf has a feed in that set. The write's statement
// checks the generation (layout.Queries.FeedsGen) and changes nothing when
// it moved: the caller then runs the write in a transaction, which loads
// the feeds and records the change if cf has a feed now.
func (fs *Feeds) Loaded(cf string) (gen any, on bool) {
	if fs == nil {
		return nil, false
	}
	return fs.gen, fs.set[cf] != nil
}

// OnAlone reports whether cf has a feed, read on the writer c outside a
// transaction: for a call that runs as a lone statement, to decide whether
// it must run in a transaction that records its change instead. A feed
// turned on between this read and the call's statement is missed: the
// statements that can check the generation themselves use Loaded.
func (fs *Feeds) OnAlone(ctx context.Context, c *engine.Conn, cf string) (bool, error) {
	if fs == nil {
		return false, nil
	}
	gen, err := readGen(ctx, c)
	if err != nil {
		return false, err
	}
	if gen != fs.gen {
		set, err := loadFeeds(ctx, c, gen)
		if err != nil {
			return false, err
		}
		fs.set, fs.gen, fs.lastOK = set, gen, false
	}
	return fs.set[cf] != nil, nil
}

// load reads the generation inside tx and, if it moved, the feeds.
func (fs *Feeds) load(ctx context.Context, tx *engine.Tx) error {
	c := tx.Conn()
	gen, err := readGen(ctx, c)
	if err != nil {
		return err
	}
	if gen != fs.gen {
		set, err := loadFeeds(ctx, c, gen)
		if err != nil {
			return err
		}
		fs.set, fs.gen, fs.lastOK = set, gen, false
	}
	fs.none = len(fs.set) == 0
	// Kept after tx ends (a hook clearing it would run as the next writer
	// starts): the reference keeps tx's address from being reused, so no
	// later transaction is ever taken for it.
	fs.tx = tx
	return nil
}

func readGen(ctx context.Context, c *engine.Conn) (int64, error) {
	dest := make([]driver.Value, 1)
	err := c.QueryRow(ctx, genSQL, dest)
	switch {
	case err == engine.ErrNotFound || engine.NoSuchTable(err):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("changelog: feeds' generation: %w", err)
	}
	g, _ := dest[0].(int64)
	return g, nil
}

func loadFeeds(ctx context.Context, c *engine.Conn, gen int64) (map[string]*Config, error) {
	if gen == 0 {
		return nil, nil
	}
	all, err := ListFeeds(ctx, c)
	if err != nil {
		return nil, err
	}
	set := make(map[string]*Config, len(all))
	for i := range all {
		set[all[i].CF] = &all[i]
	}
	return set, nil
}

// ListFeeds returns every feed the store has, by name (none when it has
// no feed table).
func ListFeeds(ctx context.Context, c *engine.Conn) ([]Config, error) {
	rows, err := c.Query(ctx, feedsAllSQL)
	if err != nil && strings.Contains(err.Error(), "no such column") {
		rows, err = c.Query(ctx, feedsAllV1SQL)
	}
	if err != nil {
		if engine.NoSuchTable(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("changelog: feeds: %w", err)
	}
	var out []Config
	for rows.Next() {
		out = append(out, Config{
			CF: string(rows.Bytes(0)), KeepValues: rows.Int(1) != 0,
			Retention: Retention{MaxCount: rows.Int(2), MaxAgeMs: rows.Int(3), MaxBytes: rows.Int(4)},
		})
	}
	err = rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("changelog: feeds: %w", err)
	}
	return out, nil
}

// Record writes one change of cf inside tx if cf has a feed, dropping the
// value of a put when the feed keeps none, and has tx's commit wake the
// process's tailing readers. A column family without a feed writes
// nothing.
func (fs *Feeds) Record(ctx context.Context, tx *engine.Tx, cf string, op Op, key, value []byte, expiryMs int64) error {
	if fs == nil || fs.tx == tx && fs.none {
		return nil
	}
	conf, err := fs.For(ctx, tx, cf)
	if conf == nil || err != nil {
		return err
	}
	// What a reader reads back: the value kept, opened.
	plain := value
	if op == OpPut && !conf.KeepValues {
		value, plain = nil, nil
	} else if op == OpPut {
		if value == nil {
			value, plain = []byte{}, []byte{}
		}
		if st := fs.sealing(); st != nil && st.Write != nil {
			k := st.Write
			value = k.Seal(append(make([]byte, 0, 1+len(value)+seal.Overhead), k.Gen()), SealTable(cf), key, value)
			op = OpSealedPut
		}
	}
	seq, err := fs.Rec.Record(ctx, tx, cf, op, key, value, expiryMs)
	if err != nil {
		return err
	}
	if fs.fire != tx { // as fs.tx, kept after tx ends
		fs.fire = tx
		// The process's readers keep a window of the latest changes
		// (Pages): this transaction's changes extend it once committed,
		// while a reader exists.
		fs.pend = nil
		if fs.Pages.Keeping() {
			fs.pend = pendingPool.Get().(*pending)
			// The transaction holds the write lock since its first
			// write: the readers that find the mark moved by its commit
			// wait for its Publish instead of reading the file.
			fs.pend.pages, fs.pend.land = &fs.Pages, fs.Pages.Land(tx.DB())
		}
		p, db := fs.pend, tx.DB()
		tx.OnCommit(func() { fs.committed(db, p) })
		if p != nil {
			tx.OnRollback(p.release)
		}
	}
	if p := fs.pend; p != nil {
		if st := fs.Rec.last.Load(); st != nil && st.tx == tx {
			if op == OpSealedPut {
				op = OpPut
			}
			fs.keep(p, Change{Seq: seq, Tx: st.id, AtMs: st.atMs, CF: cf, Op: op, Key: key, Value: plain, ExpiryMs: expiryMs})
		} else {
			p.over = true
		}
	}
	return nil
}

// pending is the changes one write transaction recorded, as the readers
// read them back (Change, values opened), kept to extend the readers'
// window when it commits (PageCache.Publish, which copies them). over:
// too many for the window, or not all known; the readers then read them
// through SQL.
type pending struct {
	chs   []Change
	bytes int
	over  bool
	pages *PageCache
	land  uint64 // pages' landing (PageCache.Land)
}

var pendingPool = sync.Pool{New: func() any { return new(pending) }}

// keep adds c to p, its key and value copied into fs.arena.
func (fs *Feeds) keep(p *pending, c Change) {
	if p.over {
		return
	}
	p.bytes += len(c.Key) + len(c.Value)
	if len(p.chs) >= PageCacheChanges || p.bytes > PageCacheBytes {
		p.over, p.chs = true, p.chs[:0]
		return
	}
	c.Key, c.Value = fs.clone(c.Key), fs.clone(c.Value)
	p.chs = append(p.chs, c)
}

// arenaBlock is the size of the blocks the keys and values kept for the
// readers' window are copied into: one after another, as a read of the
// log would lay them out, never written again (the window shares them).
const arenaBlock = 64 << 10

func (fs *Feeds) clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	if cap(fs.arena)-len(fs.arena) < len(b) {
		fs.arena = make([]byte, 0, max(arenaBlock, len(b)))
	}
	n := len(fs.arena)
	fs.arena = append(fs.arena, b...)
	return fs.arena[n:len(fs.arena):len(fs.arena)]
}

// committed runs when a transaction that recorded changes has committed:
// its changes p (nil: not kept) extend the readers' window when nothing
// else committed since the window's state, then the readers are woken.
func (fs *Feeds) committed(db *engine.DB, p *pending) {
	if p != nil {
		if !p.over {
			fs.Pages.Publish(db, &fs.Notify, p.chs, p.bytes)
		}
		p.release()
	}
	fs.Notify.Notify()
}

// release gives p back to the pool once its changes are copied (or
// dropped with a rollback), and ends its landing.
func (p *pending) release() {
	if p.pages != nil {
		p.pages.EndLand(p.land)
	}
	clear(p.chs) // the arena's bytes are the window's now
	p.chs, p.bytes, p.over, p.pages, p.land = p.chs[:0], 0, false, nil, 0
	pendingPool.Put(p)
}

// SetFeed turns cf's feed on with conf's options (or changes them) inside
// the write transaction tx, creating the change log if needed, and bumps
// the generation so that every writer, in any process, sees it from its
// next transaction.
func (fs *Feeds) SetFeed(ctx context.Context, tx *engine.Tx, conf Config, nowMs int64) error {
	c := tx.Conn()
	if err := Ensure(ctx, c, nowMs); err != nil {
		return err
	}
	if err := EnsureConsumers(ctx, c); err != nil {
		return err
	}
	if err := c.ExecScript(ctx, feedsSQL); err != nil {
		return fmt.Errorf("changelog: create feeds: %w", err)
	}
	dest := make([]driver.Value, 1)
	if err := c.QueryRow(ctx, hasBytesSQL, dest); err != nil {
		return fmt.Errorf("changelog: feeds' columns: %w", err)
	}
	if n, _ := dest[0].(int64); n == 0 {
		if _, err := c.Exec(ctx, addBytesSQL); err != nil {
			return fmt.Errorf("changelog: add max_bytes to the feeds: %w", err)
		}
	}
	keep := int64(0)
	if conf.KeepValues {
		keep = 1
	}
	if _, err := c.Exec(ctx, feedSetSQL, conf.CF, keep, conf.Retention.MaxCount, conf.Retention.MaxAgeMs, conf.Retention.MaxBytes); err != nil {
		return fmt.Errorf("changelog: set feed: %w", err)
	}
	return fs.bump(ctx, tx)
}

// DeleteFeed turns cf's feed off inside tx and reports whether it was on.
// The history already recorded stays until it is trimmed.
func (fs *Feeds) DeleteFeed(ctx context.Context, tx *engine.Tx, cf string) (bool, error) {
	n, err := tx.Conn().Exec(ctx, feedDelSQL, cf)
	if err != nil {
		if engine.NoSuchTable(err) {
			return false, nil
		}
		return false, fmt.Errorf("changelog: delete feed: %w", err)
	}
	if n == 0 {
		return false, nil
	}
	return true, fs.bump(ctx, tx)
}

// bump moves the generation and makes tx's next write read the feeds
// again.
func (fs *Feeds) bump(ctx context.Context, tx *engine.Tx) error {
	if _, err := tx.Conn().Exec(ctx, bumpSQL); err != nil {
		return fmt.Errorf("changelog: feeds' generation: %w", err)
	}
	fs.tx = nil
	// A rollback takes the new generation back, and another transaction
	// may reach the same number with other feeds: load them again then.
	tx.OnRollback(func() { fs.gen = -1 })
	return nil
}

func (fs *Feeds) sealing() *seal.State {
	if fs.Seal == nil {
		return nil
	}
	return fs.Seal()
}

// SealTable is the table name a kept value of column family cf is sealed
// under (the associated data binds it, with the key, to the change log and
// the column family).
func SealTable(cf string) string { return Table + "/" + cf }

// OpenValues opens, in place, the sealed values of the changes chs read
// from the log in the read transaction on c: each OpSealedPut becomes an
// OpPut with its value. A value is opened with the store's keys of now,
// else with those of the encryption header c's snapshot holds (a Rekey or
// RemoveEncryption may have ended since the read began, converting the
// values the snapshot still has). One that opens under neither (another
// store's, moved to another change) fails with engine.ErrAuth.
func (fs *Feeds) OpenValues(ctx context.Context, c *engine.Conn, chs []Change) error {
	var snap *seal.State
	looked := false
	for i := range chs {
		ch := &chs[i]
		if ch.Op != OpSealedPut {
			continue
		}
		v, err := openKept(fs.sealing(), ch.Seq, ch.CF, ch.Key, ch.Value)
		if errors.Is(err, engine.ErrAuth) && fs.Followed != nil {
			if !looked {
				looked, snap = true, fs.snapshotSeal(ctx, c)
			}
			if snap != nil {
				v, err = openKept(snap, ch.Seq, ch.CF, ch.Key, ch.Value)
			}
		}
		if err != nil {
			return err
		}
		ch.Op, ch.Value = OpPut, v
	}
	return nil
}

// snapshotSeal returns the state the store followed with the encryption
// header of c's snapshot, or nil (none, never followed, or unreadable).
func (fs *Feeds) snapshotSeal(ctx context.Context, c *engine.Conn) *seal.State {
	dest := make([]driver.Value, 1)
	if err := c.QueryRow(ctx, snapshotHeaderSQL, dest); err != nil {
		return nil
	}
	h, _ := dest[0].([]byte)
	if h == nil {
		return nil
	}
	return fs.Followed(h)
}

// snapshotHeaderSQL reads the encryption header row.
var snapshotHeaderSQL = `SELECT value FROM ` + layout.Quote(layout.MetaTable) + ` WHERE name = '` + layout.SealHeaderRow + `'`

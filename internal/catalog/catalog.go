package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/snkv-go/snkv/internal/changelog"
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/expiry"
	"github.com/snkv-go/snkv/internal/family"
	"github.com/snkv-go/snkv/internal/layout"
)

// Registry tracks a store's column families and hidden tables: the state
// each shares among its handles (a family.Family per name), the file's
// format, and its encryption header. kvstore.Open creates one per store.
// It is safe for concurrent use.
type Registry struct {
	env   *family.Env
	mu    sync.Mutex
	metas map[string]*family.Family // by family.FoldName
	// v2 is set once the file is known to be format 2: from then on every
	// table in its catalog has the format-2 layout (Upgrade sets the
	// format only after converting them all, and a format-2 file creates
	// only format-2 tables), so a handle's layout need not be asked of
	// SQLite (see shapeOf). A file never goes back to format 1.
	v2 atomic.Bool
	// sealHdr is the encryption header Init read (nil: none), and
	// sealScrub whether the file recorded a scrub still to run.
	sealHdr   []byte
	sealScrub bool
	// created: Init made the file a store (it was new or empty).
	created bool
}

// NewRegistry returns the registry of the store described by env.
func NewRegistry(env *family.Env) *Registry {
	return &Registry{env: env, metas: make(map[string]*family.Family)}
}

// Env returns what the store's column families share.
func (r *Registry) Env() *family.Env { return r.env }

// Init checks the file's format and, on a new (or adopted) file, writes the
// snkv header, the catalog and the default column family. A file it refuses
// is left exactly as it was: nothing is written, not even the journal mode,
// before the file is known to be a store or a new file.
func (r *Registry) Init(ctx context.Context, adopt bool) error {
	db := r.env.DB
	if db.Config().ReadOnly {
		c, err := db.AcquireReader(ctx)
		if err != nil {
			return err
		}
		defer db.ReleaseReader(c)
		h, err := readHeaderNow(ctx, c, false, true)
		if err != nil {
			return err
		}
		if h.fresh {
			return fmt.Errorf("%w: the file has no snkv catalog and the store is read-only", engine.ErrNotStore)
		}
		return r.opened(ctx, c, h)
	}
	c, err := db.AcquireWriter(ctx)
	if err != nil {
		return err
	}
	defer db.ReleaseWriter(c)
	h, err := readHeaderNow(ctx, c, adopt, false)
	if err != nil {
		return engine.Wrap(ctx, "open", err)
	}
	if h.fresh && h.objects == 0 && !db.Memory() {
		if err := incrementalVacuum(ctx, c); err != nil {
			return engine.Wrap(ctx, "open", err)
		}
	}
	if err := db.SetJournalMode(ctx, c); err != nil {
		return engine.Wrap(ctx, "open", err)
	}
	if !h.fresh {
		// A store already: nothing to write, so no write lock to take
		// (and no second read of the header, which scans sqlite_schema).
		return engine.Wrap(ctx, "open", r.opened(ctx, c, h))
	}
	if err := c.Control(ctx, "BEGIN IMMEDIATE"); err != nil {
		return engine.Wrap(ctx, "open", err)
	}
	v2, created := false, false
	err = func() error {
		// Again under the write lock: another process may have got here first.
		h, err := readHeader(ctx, c, adopt, false)
		if err != nil || !h.fresh {
			v2 = h.format >= 2
			return err
		}
		v2, created = true, true
		return writeHeader(ctx, c, h, expiry.StampMs(r.env.Clock))
	}()
	if err != nil {
		_ = c.Control(context.Background(), "ROLLBACK")
		return engine.Wrap(ctx, "open", err)
	}
	if err := c.Control(ctx, "COMMIT"); err != nil {
		return engine.Wrap(ctx, "open", err)
	}
	r.v2.Store(v2)
	r.created = created
	return nil
}

// incrementalVacuum gives a file without tables incremental auto-vacuum.
// Only such a file can still choose its vacuum mode. On a file without a
// page yet (a new store) setting it is enough: the mode is written with the
// first page. Once the first page is written (switching to WAL writes it),
// a new mode takes effect only through VACUUM, which is instant on a file
// without tables; it is skipped when the file has the mode already, as
// when another process creating the same store wrote the first page
// meanwhile.
func incrementalVacuum(ctx context.Context, c *engine.Conn) error {
	const incremental = 2
	if err := c.ExecScript(ctx, "PRAGMA auto_vacuum = INCREMENTAL"); err != nil {
		return err
	}
	mode, err := c.QueryInt(ctx, "PRAGMA auto_vacuum")
	if err != nil || mode == incremental {
		return err
	}
	return c.ExecScript(ctx, "VACUUM")
}

// opened records what Init learnt of an existing store on c: its format,
// and its encryption header (format 2 on).
func (r *Registry) opened(ctx context.Context, c *engine.Conn, h header) error {
	r.v2.Store(h.format >= 2)
	if h.format < 2 {
		return nil
	}
	var err error
	r.sealHdr, r.sealScrub, err = readSealHeader(ctx, c)
	return err
}

// createIn creates column family name inside the transaction on c and
// returns its creation stamp: the catalog's created_ms, which is the
// creation time in milliseconds, moved past every stamp in the catalog so
// that a column family dropped and created again (by any process) gets a
// new one, which handles to the old one are checked against.
func createIn(ctx context.Context, c *engine.Conn, name string, nowMs int64) (int64, error) {
	if n, err := c.QueryInt(ctx, `SELECT count(*) FROM `+catalog+` WHERE name = ?1`, name); err != nil {
		return 0, err
	} else if n > 0 {
		return 0, fmt.Errorf("%w: column family %q", engine.ErrExists, name)
	}
	if n, err := c.QueryInt(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = ?1 COLLATE NOCASE`, name); err != nil {
		return 0, err
	} else if n > 0 {
		return 0, fmt.Errorf("%w: the file already has a table, index or view named %q that is not a column family", engine.ErrExists, name)
	}
	ver, err := fileFormat(ctx, c, 0)
	if err != nil {
		return 0, err
	}
	// The largest stamp of a column family that still exists, and from
	// format 2 on the largest ever given out: a dropped column family's
	// row is gone from the catalog, and without the meta row a column
	// family created again within its millisecond got its stamp back, so
	// that handles to the dropped one read the new one.
	stampSQL, args := `SELECT coalesce(max(created_ms), 0) FROM `+catalog, []any(nil)
	if ver >= 2 {
		stampSQL = `SELECT max(coalesce((SELECT max(created_ms) FROM ` + catalog + `), 0), coalesce((SELECT CAST(value AS INTEGER) FROM ` + metaTable + ` WHERE name = ?1), 0))`
		args = []any{layout.StampRow}
	}
	last, err := c.QueryInt(ctx, stampSQL, args...)
	if err != nil {
		return 0, err
	}
	stamp := max(nowMs, last+1)
	if ver >= 2 {
		if _, err := c.Exec(ctx, `INSERT OR REPLACE INTO `+metaTable+` (name, value) VALUES (?1, ?2)`, layout.StampRow, stamp); err != nil {
			return 0, err
		}
	}
	// A version-1 file gets version-1 tables until Upgrade converts all of
	// them together.
	t := layout.For(name, ver >= 2, ver >= 2)
	q := []string{t.V1DataTableSQL()}
	if ver >= 2 {
		q = []string{t.DataTableSQL(), t.ChecksumTriggerSQL()}
	}
	q = append(q, t.PlainViewSQL())
	for _, q := range q {
		if err := c.ExecScript(ctx, q); err != nil {
			return 0, err
		}
	}
	_, err = c.Exec(ctx, `INSERT INTO `+catalog+` (name, kind, created_ms) VALUES (?1, 'kv', ?2)`, name, stamp)
	return stamp, err
}

// lookup returns the stored spelling of a column family name and its
// creation stamp, or ErrNotFound.
func lookup(ctx context.Context, c *engine.Conn, name string) (string, int64, error) {
	rows, err := c.Query(ctx, `SELECT name, created_ms FROM `+catalog+` WHERE name = ?1`, name)
	if err != nil {
		return "", 0, err
	}
	found := rows.Next()
	stored, stamp := string(rows.Bytes(0)), rows.Int(1)
	if err := rows.Close(); err != nil {
		return "", 0, err
	}
	if !found {
		return "", 0, fmt.Errorf("%w: column family %q", engine.ErrNotFound, name)
	}
	return stored, stamp, nil
}

// familyFor returns the shared state of a column family, creating it on first
// use, with its TTL flag and its layout refreshed from the schema. State
// kept for an older column family of the same name (dropped and created
// again elsewhere) is retired: its handles fail with ErrNotFound.
func (r *Registry) familyFor(ctx context.Context, c *engine.Conn, name string, stamp int64) (*family.Family, error) {
	crc, v2, err := r.shapeOf(ctx, c, name)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	m := r.metas[family.FoldName(name)]
	r.mu.Unlock()
	sealed := !layout.IsHidden(name)
	if !sealed && (m == nil || m.Stamp != stamp) {
		// A hidden table's state is new: ask whether it is sealed.
		if sealed, err = r.hiddenSealed(ctx, c, name); err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	m = r.metas[family.FoldName(name)]
	if m != nil && m.Stamp != stamp {
		m.Dropped.Store(true)
		m = nil
	}
	if m == nil {
		m = family.New(r.env, name, stamp, crc, v2)
		m.Sealed.Store(sealed)
		r.metas[family.FoldName(name)] = m
	} else if sh := m.Writing(); sh.Objects.Crc != crc || sh.Objects.V2 != v2 {
		m.SetShape(family.NewShape(name, crc, v2))
	}
	r.mu.Unlock()
	on, err := expiry.Enabled(ctx, c, &m.Writing().Objects)
	if err != nil {
		return nil, err
	}
	m.TTL.Store(on)
	return m, nil
}

// shapeOf is readShape, answered without asking SQLite once the file is
// known to be format 2. The question is not free: PRAGMA table_list
// first works out the columns of every view in the file, which took
// 0.5 s on a fresh connection to a file of 3,000 column families, and
// again after each schema change.
func (r *Registry) shapeOf(ctx context.Context, c *engine.Conn, name string) (crc, v2 bool, err error) {
	if r.v2.Load() {
		return true, true, nil
	}
	return family.ReadShape(ctx, c, name)
}

// OpenDefault is Open of the default column family, reading the catalog on
// the writer connection rather than a reader when the store has one. Open
// of a store uses it so that it opens one SQLite connection, not two:
// each connection parses every CREATE statement of the file when it is
// first used, at a cost that grows with the number of column families. The
// first read opens a reader.
func (r *Registry) OpenDefault(ctx context.Context) (*family.Family, error) {
	db := r.env.DB
	if db.Config().ReadOnly {
		return r.Open(ctx, family.DefaultName)
	}
	return r.openOn(ctx, db.WithWriter, family.DefaultName)
}

// Create makes a new column family.
func (r *Registry) Create(ctx context.Context, name string) (*family.Family, error) {
	if err := family.ValidateName(name); err != nil {
		return nil, err
	}
	var f *family.Family
	err := r.env.Update(ctx, nil, "create column family", func(ctx context.Context, tx *engine.Tx) (err error) {
		f, err = r.createOn(ctx, tx, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// createOn creates the column family name inside tx and returns its state.
func (r *Registry) createOn(ctx context.Context, tx *engine.Tx, name string) (*family.Family, error) {
	c := tx.Conn()
	stamp, err := createIn(ctx, c, name, expiry.StampMs(r.env.Clock))
	if err != nil {
		return nil, err
	}
	crc, v2, err := r.shapeOf(ctx, c, name)
	if err != nil {
		return nil, err
	}
	if err := r.env.Feeds.Record(ctx, tx, name, changelog.OpCreateCF, nil, nil, changelog.NoExpiry); err != nil {
		return nil, err
	}
	// A new table gets new shared state, never the state of a column
	// family of the same name dropped a moment ago.
	m := family.New(r.env, name, stamp, crc, v2)
	r.mu.Lock()
	r.metas[family.FoldName(name)] = m
	r.mu.Unlock()
	return m, nil
}

// OpenOrCreate returns the column family name, creating it if it does not
// exist. The common case, an existing column family, is a look-up on a
// reader; otherwise the look-up is repeated and the column family created
// in one write transaction, so that a concurrent Drop or Create of the same
// name can never make it fail: it returns the column family as that
// transaction found or made it.
func (r *Registry) OpenOrCreate(ctx context.Context, name string) (*family.Family, error) {
	f, err := r.Open(ctx, name)
	if !errors.Is(err, engine.ErrNotFound) {
		return f, err
	}
	err = r.env.Update(ctx, nil, "open or create column family", func(ctx context.Context, tx *engine.Tx) error {
		c := tx.Conn()
		stored, stamp, err := lookup(ctx, c, name)
		switch {
		case err == nil:
			m, err := r.familyFor(ctx, c, stored, stamp)
			if err == nil {
				f = m
			}
			return err
		case !errors.Is(err, engine.ErrNotFound):
			return err
		}
		f, err = r.createOn(ctx, tx, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Open returns the existing column family name.
func (r *Registry) Open(ctx context.Context, name string) (*family.Family, error) {
	if err := family.ValidateName(name); err != nil {
		return nil, err
	}
	return r.openOn(ctx, r.env.DB.WithReader, name)
}

// openOn looks the column family name up in the catalog on the connection
// with lends (a reader, or the writer) and returns its state.
func (r *Registry) openOn(ctx context.Context, with func(context.Context, func(*engine.Conn) error) error, name string) (*family.Family, error) {
	var m *family.Family
	err := with(ctx, func(c *engine.Conn) error {
		stored, stamp, err := lookup(ctx, c, name)
		if err != nil {
			return err
		}
		m, err = r.familyFor(ctx, c, stored, stamp)
		return err
	})
	if err != nil {
		return nil, engine.Wrap(ctx, "open column family", err)
	}
	return m, nil
}

// Drop deletes a column family, its data and its TTL state. The default
// column family cannot be dropped. Handles to it fail with ErrNotFound.
func (r *Registry) Drop(ctx context.Context, name string) error {
	if err := family.ValidateName(name); err != nil {
		return err
	}
	if family.FoldName(name) == family.DefaultName {
		return engine.ErrDropDefault
	}
	return r.env.Update(ctx, nil, "drop column family", func(ctx context.Context, tx *engine.Tx) error {
		c := tx.Conn()
		stored, _, err := lookup(ctx, c, name)
		if err != nil {
			return err
		}
		return r.dropTables(tx, stored)
	})
}

// dropTables drops the tables of the catalogued table stored (a column
// family or a hidden table), with its TTL state, and its catalog row, inside
// tx. Handles to it are retired when tx commits: the hook runs once the
// writer is free again, perhaps after a Create of the same name, so it
// retires only the state it saw here.
func (r *Registry) dropTables(tx *engine.Tx, stored string) error {
	ctx, c := tx.Ctx(), tx.Conn()
	tx.ForgetVerified()                   // handles of this column family must check again
	t := layout.For(stored, false, false) // the names only
	if err := r.env.Feeds.Record(ctx, tx, stored, changelog.OpDropCF, nil, nil, changelog.NoExpiry); err != nil {
		return err
	}
	for _, q := range t.DropSQL() {
		if err := c.ExecScript(ctx, q); err != nil {
			return err
		}
	}
	if _, err := c.Exec(ctx, `DELETE FROM `+catalog+` WHERE name = ?1`, stored); err != nil {
		return err
	}
	if layout.IsHidden(stored) && r.v2.Load() {
		if _, err := c.Exec(ctx, `DELETE FROM `+metaTable+` WHERE name = ?1`, layout.SealedMarker(stored)); err != nil {
			return err
		}
	}
	r.mu.Lock()
	m := r.metas[family.FoldName(stored)]
	r.mu.Unlock()
	tx.OnCommit(func() {
		if m == nil {
			return
		}
		m.Dropped.Store(true)
		r.mu.Lock()
		if r.metas[family.FoldName(stored)] == m {
			delete(r.metas, family.FoldName(stored))
		}
		r.mu.Unlock()
	})
	return nil
}

// List returns the names of all column families, sorted bytewise. Hidden
// tables of other kinds (see CreateHidden) are not column families.
func (r *Registry) List(ctx context.Context) ([]string, error) {
	var names []string
	err := r.env.DB.WithReader(ctx, func(c *engine.Conn) error {
		rows, err := c.Query(ctx, `SELECT name FROM `+catalog+` WHERE kind = 'kv'`)
		if err != nil {
			return err
		}
		for rows.Next() {
			names = append(names, string(rows.Bytes(0)))
		}
		return rows.Close()
	})
	if err != nil {
		return nil, engine.Wrap(ctx, "list column families", err)
	}
	slices.Sort(names)
	return names, nil
}

// CreateIn creates the column family name inside the write transaction tx
// and returns its state (its handles are not bound to tx). The column
// family exists for others once tx commits; if tx rolls back, nothing of
// it was ever written, and its handles report ErrNotFound. It fails as
// Create does, and with ErrReadOnlyTx in a read-only transaction.
func (r *Registry) CreateIn(tx *engine.Tx, name string) (*family.Family, error) {
	if err := family.ValidateName(name); err != nil {
		return nil, err
	}
	if err := tx.Check(true); err != nil {
		return nil, err
	}
	f, err := r.createOn(tx.Ctx(), tx, name)
	if err != nil {
		return nil, engine.Wrap(tx.Ctx(), "create column family", err)
	}
	return f, nil
}

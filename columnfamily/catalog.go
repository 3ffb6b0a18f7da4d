package columnfamily

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/ttl"
)

// Format identifiers written into every store file.
const (
	// ApplicationID is the value of PRAGMA application_id in an snkv file
	// ("snkv" in ASCII).
	ApplicationID = 0x736e6b76
	// FormatVersion is the value of PRAGMA user_version this library writes
	// and the newest it can read.
	FormatVersion = 1
	// CatalogTable lists the column families of a store.
	CatalogTable = "__snkv_catalog"
)

var catalog = engine.Quote(CatalogTable)

// Env is what every column family of a store shares.
type Env struct {
	DB           *engine.DB
	Clock        ttl.Clock
	MaxValueSize int
}

// Registry tracks a store's column families. It is created by kvstore.
type Registry struct {
	env   *Env
	mu    sync.Mutex
	metas map[string]*meta // by foldName
}

// NewRegistry returns the registry of the store described by env.
func NewRegistry(env *Env) *Registry {
	return &Registry{env: env, metas: make(map[string]*meta)}
}

// Init checks the file's format and, on a new (or adopted) file, writes the
// snkv header, the catalog and the default column family.
func (r *Registry) Init(ctx context.Context, adopt bool) error {
	db := r.env.DB
	if db.Config().ReadOnly {
		c, err := db.AcquireReader(ctx)
		if err != nil {
			return err
		}
		defer db.ReleaseReader(c)
		fresh, err := checkFormat(ctx, c, false)
		if err != nil {
			return err
		}
		if fresh {
			return fmt.Errorf("%w: the file has no snkv catalog and the store is read-only", engine.ErrNotStore)
		}
		return nil
	}
	c, err := db.AcquireWriter(ctx)
	if err != nil {
		return err
	}
	defer db.ReleaseWriter(c)
	// Nothing is written to the file before it is known to be a store or a
	// new file: a refused file is left exactly as it was.
	fresh, err := checkFormat(ctx, c, adopt)
	if err != nil {
		return engine.Wrap(ctx, "open", err)
	}
	if n, err := count(ctx, c, `SELECT count(*) FROM sqlite_schema`); err != nil {
		return engine.Wrap(ctx, "open", err)
	} else if fresh && n == 0 && !db.Memory() {
		// Only a file without tables can still choose its vacuum mode. Once
		// the header is written (switching to WAL writes it), the new mode
		// takes effect only through VACUUM, which is instant on an empty file.
		if err := c.ExecScript(ctx, "PRAGMA auto_vacuum = INCREMENTAL; VACUUM"); err != nil {
			return engine.Wrap(ctx, "open", err)
		}
	}
	if err := db.SetJournalMode(ctx, c); err != nil {
		return engine.Wrap(ctx, "open", err)
	}
	if err := c.Control(ctx, "BEGIN IMMEDIATE"); err != nil {
		return engine.Wrap(ctx, "open", err)
	}
	err = func() error {
		// Again under the write lock: another process may have got here first.
		fresh, err := checkFormat(ctx, c, adopt)
		if err != nil || !fresh {
			return err
		}
		for _, q := range []string{
			fmt.Sprintf("PRAGMA application_id = %d", ApplicationID),
			fmt.Sprintf("PRAGMA user_version = %d", FormatVersion),
			`CREATE TABLE ` + catalog + ` (name TEXT PRIMARY KEY NOT NULL COLLATE NOCASE, kind TEXT NOT NULL DEFAULT 'kv', created_ms INTEGER NOT NULL) WITHOUT ROWID`,
		} {
			if err := c.ExecScript(ctx, q); err != nil {
				return err
			}
		}
		_, err = createIn(ctx, c, DefaultName, ttl.NowMs(r.env.Clock))
		return err
	}()
	if err != nil {
		_ = c.Control(context.Background(), "ROLLBACK")
		return engine.Wrap(ctx, "open", err)
	}
	return engine.Wrap(ctx, "open", c.Control(ctx, "COMMIT"))
}

// checkFormat reads the header and reports whether the file still needs
// initialising; it fails on a file that belongs to something else.
func checkFormat(ctx context.Context, c *engine.Conn, adopt bool) (fresh bool, err error) {
	app, err := count(ctx, c, "PRAGMA application_id")
	if err != nil {
		return false, err
	}
	ver, err := count(ctx, c, "PRAGMA user_version")
	if err != nil {
		return false, err
	}
	tables, err := count(ctx, c, `SELECT count(*) FROM sqlite_schema`)
	if err != nil {
		return false, err
	}
	hasCatalog, err := count(ctx, c, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = '`+CatalogTable+`'`)
	if err != nil {
		return false, err
	}
	switch {
	case app == ApplicationID && ver > FormatVersion:
		return false, fmt.Errorf("%w: file format %d, this library reads up to %d", engine.ErrVersion, ver, FormatVersion)
	case app == ApplicationID && hasCatalog == 0:
		return false, fmt.Errorf("%w: snkv header without a catalog table", engine.ErrCorrupt)
	case app == ApplicationID:
		return false, nil
	case app != 0:
		return false, fmt.Errorf("%w: application_id %#x belongs to another application", engine.ErrNotStore, app)
	case tables == 0 || adopt:
		return true, nil
	}
	return false, fmt.Errorf("%w: it has %d schema objects and no snkv header (set Options.Adopt to add snkv's tables beside them)", engine.ErrNotStore, tables)
}

func count(ctx context.Context, c *engine.Conn, q string, args ...any) (int64, error) {
	rows, err := c.Query(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	var n int64
	if rows.Next() {
		n = rows.Int(0)
	}
	return n, rows.Close()
}

// createIn creates column family name inside the transaction on c and
// returns its creation stamp: the catalog's created_ms, which is the
// creation time in milliseconds, moved past every stamp in the catalog so
// that a column family dropped and created again (by any process) gets a
// new one, which handles to the old one are checked against.
func createIn(ctx context.Context, c *engine.Conn, name string, nowMs int64) (int64, error) {
	if n, err := count(ctx, c, `SELECT count(*) FROM `+catalog+` WHERE name = ?1`, name); err != nil {
		return 0, err
	} else if n > 0 {
		return 0, fmt.Errorf("%w: column family %q", engine.ErrExists, name)
	}
	if n, err := count(ctx, c, `SELECT count(*) FROM sqlite_schema WHERE name = ?1 COLLATE NOCASE`, name); err != nil {
		return 0, err
	} else if n > 0 {
		return 0, fmt.Errorf("%w: the file already has a table, index or view named %q that is not a column family", engine.ErrExists, name)
	}
	last, err := count(ctx, c, `SELECT coalesce(max(created_ms), 0) FROM `+catalog)
	if err != nil {
		return 0, err
	}
	stamp := max(nowMs, last+1)
	t := ttl.TablesFor(name)
	for _, q := range []string{
		`CREATE TABLE ` + t.Data + ` (key BLOB PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID`,
		t.PlainViewSQL(),
	} {
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

// metaFor returns the shared state of a column family, creating it on first
// use, with its TTL flag refreshed from the schema. State kept for an older
// column family of the same name (dropped and created again elsewhere) is
// retired: its handles fail with ErrNotFound.
func (r *Registry) metaFor(ctx context.Context, c *engine.Conn, name string, stamp int64) (*meta, error) {
	r.mu.Lock()
	m := r.metas[foldName(name)]
	if m != nil && m.stamp != stamp {
		m.dropped.Store(true)
		m = nil
	}
	if m == nil {
		m = newMeta(r, name, stamp)
		r.metas[foldName(name)] = m
	}
	r.mu.Unlock()
	on, err := m.t.Enabled(ctx, c)
	if err != nil {
		return nil, err
	}
	m.ttl.Store(on)
	return m, nil
}

// Create makes a new column family.
func (r *Registry) Create(ctx context.Context, name string) (*ColumnFamily, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	var cf *ColumnFamily
	err := r.env.update(ctx, nil, "create column family", func(ctx context.Context, tx *engine.Tx) error {
		stamp, err := createIn(ctx, tx.Conn(), name, ttl.NowMs(r.env.Clock))
		if err != nil {
			return err
		}
		// A new table gets new shared state, never the state of a column
		// family of the same name dropped a moment ago.
		m := newMeta(r, name, stamp)
		r.mu.Lock()
		r.metas[foldName(name)] = m
		r.mu.Unlock()
		cf = &ColumnFamily{m: m}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return cf, nil
}

// Open returns the existing column family name.
func (r *Registry) Open(ctx context.Context, name string) (*ColumnFamily, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	var m *meta
	err := r.env.DB.WithReader(ctx, func(c *engine.Conn) error {
		stored, stamp, err := lookup(ctx, c, name)
		if err != nil {
			return err
		}
		m, err = r.metaFor(ctx, c, stored, stamp)
		return err
	})
	if err != nil {
		return nil, engine.Wrap(ctx, "open column family", err)
	}
	return &ColumnFamily{m: m}, nil
}

// Drop deletes a column family, its data and its TTL state. The default
// column family cannot be dropped. Handles to it fail with ErrNotFound.
func (r *Registry) Drop(ctx context.Context, name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if foldName(name) == DefaultName {
		return engine.ErrDropDefault
	}
	return r.env.update(ctx, nil, "drop column family", func(ctx context.Context, tx *engine.Tx) error {
		c := tx.Conn()
		stored, _, err := lookup(ctx, c, name)
		if err != nil {
			return err
		}
		for _, q := range ttl.TablesFor(stored).DropSQL() {
			if err := c.ExecScript(ctx, q); err != nil {
				return err
			}
		}
		if _, err := c.Exec(ctx, `DELETE FROM `+catalog+` WHERE name = ?1`, stored); err != nil {
			return err
		}
		// The hook runs once the writer is free again, perhaps after a
		// Create of the same name: it retires only the state it saw here.
		r.mu.Lock()
		m := r.metas[foldName(stored)]
		r.mu.Unlock()
		tx.OnCommit(func() {
			if m == nil {
				return
			}
			m.dropped.Store(true)
			r.mu.Lock()
			if r.metas[foldName(stored)] == m {
				delete(r.metas, foldName(stored))
			}
			r.mu.Unlock()
		})
		return nil
	})
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

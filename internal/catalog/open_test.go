package catalog_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/columnfamily"
	"github.com/snkv-go/snkv/internal/catalog"
	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/family"
	"github.com/snkv-go/snkv/internal/v1fixture"
	"github.com/snkv-go/snkv/ttl"
	"github.com/stretchr/testify/require"
)

// openRegistry opens a registry on a new store file, the way kvstore.Open
// does, closed when the test ends.
func openRegistry(t *testing.T, path string) (*catalog.Registry, *engine.DB) {
	t.Helper()
	db, err := engine.Open(engine.Config{Path: path, Journal: "WAL", Sync: "NORMAL", BusyTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	r := catalog.NewRegistry(&family.Env{DB: db, Clock: ttl.SystemClock, MaxValueSize: family.DefaultMaxValueSize})
	require.NoError(t, r.Init(context.Background(), false))
	return r, db
}

// handle is the public handle of f, as kvstore builds it.
func handle(f *family.Family) *columnfamily.ColumnFamily {
	return family.NewHandle(f).(*columnfamily.ColumnFamily)
}

// Opening a store opens the default column family on the writer: no reader
// connection (which would parse the whole schema once more) is opened
// before the first read.
func TestOpenDefaultUsesTheWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	for range 2 { // a new file, then an existing one
		r, db := openRegistry(t, path)
		f, err := r.OpenDefault(context.Background())
		require.NoError(t, err)
		def := handle(f)
		require.Equal(t, family.DefaultName, def.Name())
		require.Equal(t, 0, db.OpenReaders())
		require.NoError(t, def.Put([]byte("k"), []byte("v")))
		v, err := def.Get([]byte("k"))
		require.NoError(t, err)
		require.Equal(t, "v", string(v))
		require.Equal(t, 1, db.OpenReaders())
		require.NoError(t, db.Close())
	}
}

// Once the file is known to be format 2, a handle's layout is not asked of
// SQLite, and the answer is the one SQLite would give.
func TestShapeOfFormat2File(t *testing.T) {
	r, db := openRegistry(t, filepath.Join(t.TempDir(), "store.db"))
	require.True(t, r.Formatted())
	ctx := context.Background()
	_, err := r.Create(ctx, "users")
	require.NoError(t, err)
	require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
		for _, name := range []string{family.DefaultName, "users"} {
			crc, v2, err := family.ReadShape(ctx, c, name)
			require.NoError(t, err)
			require.True(t, crc && v2, name)
		}
		return nil
	}))
}

// A version-1 file is asked table by table until Upgrade has converted
// it; then the shortcut holds.
func TestShapeOfVersion1File(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	require.NoError(t, v1fixture.Create(path, time.Now().UnixMilli(), map[string][]v1fixture.Row{
		"default": {{Key: []byte("k"), Value: []byte("v")}},
	}))
	r, _ := openRegistry(t, path)
	require.False(t, r.Formatted())
	ctx := context.Background()
	def, err := r.OpenDefault(ctx)
	require.NoError(t, err)
	require.False(t, def.Writing().Objects.V2)
	require.NoError(t, r.Upgrade(ctx, 0))
	require.True(t, r.Formatted())
	def, err = r.OpenDefault(ctx)
	require.NoError(t, err)
	require.True(t, def.Writing().Objects.V2 && def.Writing().Objects.Crc)
	v, err := handle(def).Get([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, "v", string(v))
}

package columnfamily

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/v1fixture"
	"github.com/snkv-go/snkv/ttl"
	"github.com/stretchr/testify/require"
)

// openRegistry opens a registry on a new store file, the way kvstore.Open
// does, closed when the test ends.
func openRegistry(t *testing.T, path string) (*Registry, *engine.DB) {
	t.Helper()
	db, err := engine.Open(engine.Config{Path: path, Journal: "WAL", Sync: "NORMAL", BusyTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	r := NewRegistry(&Env{DB: db, Clock: ttl.SystemClock, MaxValueSize: DefaultMaxValueSize})
	require.NoError(t, r.Init(context.Background(), false))
	return r, db
}

// Opening a store opens the default column family on the writer: no reader
// connection (which would parse the whole schema once more) is opened
// before the first read.
func TestOpenDefaultUsesTheWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	for range 2 { // a new file, then an existing one
		r, db := openRegistry(t, path)
		def, err := r.OpenDefault(context.Background())
		require.NoError(t, err)
		require.Equal(t, DefaultName, def.Name())
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
	require.True(t, r.v2.Load())
	ctx := context.Background()
	_, err := r.Create(ctx, "users")
	require.NoError(t, err)
	require.NoError(t, db.WithReader(ctx, func(c *engine.Conn) error {
		for _, name := range []string{DefaultName, "users"} {
			crc, v2, err := readShape(ctx, c, name)
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
	require.False(t, r.v2.Load())
	ctx := context.Background()
	def, err := r.OpenDefault(ctx)
	require.NoError(t, err)
	require.False(t, def.m.w().t.V2)
	require.NoError(t, r.Upgrade(ctx, 0))
	require.True(t, r.v2.Load())
	def, err = r.OpenDefault(ctx)
	require.NoError(t, err)
	require.True(t, def.m.w().t.V2 && def.m.w().t.Crc)
	v, err := def.Get([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, "v", string(v))
}

package family_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/engine"
	"github.com/snkv-go/snkv/internal/family"
	"github.com/snkv-go/snkv/internal/layout"
	"github.com/snkv-go/snkv/internal/rowcodec"
	"github.com/snkv-go/snkv/internal/seal"
	"github.com/snkv-go/snkv/ttl"
	"github.com/stretchr/testify/require"
)

// openEnv opens a file with one format-2 table, "t", made the way the
// catalog makes a column family's (data table, checksum trigger, view).
func openEnv(t *testing.T) *family.Env {
	t.Helper()
	db, err := engine.Open(engine.Config{Path: filepath.Join(t.TempDir(), "f.db"), Journal: "WAL", Sync: "NORMAL", BusyTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	o := layout.For("t", true, true)
	require.NoError(t, db.WithWriter(context.Background(), func(c *engine.Conn) error {
		for _, q := range []string{o.DataTableSQL(), o.ChecksumTriggerSQL(), o.PlainViewSQL()} {
			if err := c.ExecScript(context.Background(), q); err != nil {
				return err
			}
		}
		return nil
	}))
	return &family.Env{DB: db, Clock: ttl.SystemClock, MaxValueSize: family.DefaultMaxValueSize}
}

func TestValidateName(t *testing.T) {
	for _, ok := range []string{"users", "a", strings.Repeat("x", family.MaxNameLen), "Ä_sql", "_x"} {
		require.NoError(t, family.ValidateName(ok), ok)
	}
	for name, want := range map[string]error{
		"":                                  engine.ErrInvalidName,
		strings.Repeat("x", 256):            engine.ErrInvalidName,
		"a\x00b":                            engine.ErrInvalidName,
		"\xff":                              engine.ErrInvalidName,
		"__x":                               engine.ErrReservedName,
		"SQLite_x":                          engine.ErrReservedName,
		"sqlite_" + strings.Repeat("y", 10): engine.ErrReservedName,
	} {
		require.ErrorIs(t, family.ValidateName(name), want, "%q", name)
	}
}

// Names fold as SQLite folds table names: ASCII letters only.
func TestFoldName(t *testing.T) {
	require.Equal(t, "users", family.FoldName("USERS"))
	require.Equal(t, "ä", family.FoldName("ä"))
	require.Equal(t, "Ä", family.FoldName("Ä"), "non-ASCII letters stay as they are")
	require.True(t, family.HasFoldedPrefix("SQLITE_x", "sqlite_"))
	require.False(t, family.HasFoldedPrefix("sql", "sqlite_"))
}

func TestCheckContext(t *testing.T) {
	//lint:ignore SA1012 a nil context is what is checked
	require.ErrorIs(t, family.CheckContext(nil), engine.ErrInvalidArgument)
	require.NoError(t, family.CheckContext(context.Background()))
}

// A shape's statements are its layout's.
func TestShapeSQL(t *testing.T) {
	v2 := family.NewShape("t", true, true)
	o := layout.For("t", true, true)
	require.Equal(t, o.Queries(), v2.SQL)
}

// Update commits when fn succeeds, rolls back when it fails, and runs fn
// in a bound transaction without ending it.
func TestEnvUpdate(t *testing.T) {
	env := openEnv(t)
	ctx := context.Background()
	cd := family.New(env, "t", 1, true, true).Codec(family.NewShape("t", true, true))
	count := func() int64 {
		var n int64
		require.NoError(t, env.DB.WithReader(ctx, func(c *engine.Conn) (err error) {
			n, err = c.QueryInt(ctx, `SELECT count(*) FROM "t"`)
			return err
		}))
		return n
	}
	put := func(key string) func(context.Context, *engine.Tx) error {
		return func(ctx context.Context, tx *engine.Tx) error {
			return cd.Put(ctx, tx.Conn(), []byte(key), []byte("v"))
		}
	}
	require.NoError(t, env.Update(ctx, nil, "put", put("a")))
	require.EqualValues(t, 1, count())
	boom := errors.New("boom")
	err := env.Update(ctx, nil, "put", func(ctx context.Context, tx *engine.Tx) error {
		require.NoError(t, put("b")(ctx, tx))
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.Contains(t, err.Error(), "put")
	require.EqualValues(t, 1, count(), "rolled back")

	tx, err := env.DB.Begin(ctx, true)
	require.NoError(t, err)
	require.NoError(t, env.Update(ctx, tx, "put", put("c")))
	require.NoError(t, tx.Commit(), "the bound transaction is the caller's to end")
	require.EqualValues(t, 2, count())
	require.ErrorIs(t, env.Update(ctx, tx, "put", put("d")), engine.ErrTxDone)
}

// A layout switched inside a write transaction is the writers' at once and
// the readers' only once the transaction commits; a rollback restores it.
func TestSwitchShape(t *testing.T) {
	env := openEnv(t)
	ctx := context.Background()
	f := family.New(env, "t", 1, false, false)
	v1 := f.Writing()
	require.Same(t, v1, f.Reading())
	v2 := family.NewShape("t", true, true)

	tx, err := env.DB.Begin(ctx, true)
	require.NoError(t, err)
	f.SwitchShape(tx, v2)
	require.Same(t, v2, f.Writing())
	require.Same(t, v1, f.Reading(), "readers keep the committed layout")
	require.NoError(t, tx.Rollback())
	require.Same(t, v1, f.Writing(), "a rollback restores the writers' layout")

	tx, err = env.DB.Begin(ctx, true)
	require.NoError(t, err)
	f.SwitchShape(tx, v2)
	require.NoError(t, tx.Commit())
	require.Same(t, v2, f.Writing())
	require.Same(t, v2, f.Reading())
}

// The codec's Encode and Open are inverse, in the clear and sealed; a sealed value
// is bound to its table and key, and a table kept in the clear refuses a
// sealed value.
func TestEncodeDecode(t *testing.T) {
	env := openEnv(t)
	sh := family.NewShape("t", true, true)
	f := family.New(env, "t", 1, true, true)
	key, value := []byte("k"), []byte("the value")
	var st engine.Counters
	c, err := env.DB.AcquireWriter(context.Background()) // Encode seals into its scratch buffer
	require.NoError(t, err)
	defer env.DB.ReleaseWriter(c)

	cd := f.Codec(sh)
	cd.Stats = &st
	stored, sum := cd.Encode(c, key, value, false)
	require.Equal(t, value, stored, "in the clear")
	row := rowcodec.Row{Key: key, Stored: stored, Exp: -1}
	got, opened, err := cd.Open(&row, row.Sum(), sum.(int64), engine.KindInt, nil, nil)
	require.NoError(t, err)
	require.False(t, opened)
	require.Equal(t, value, got)

	kr, err := seal.Create(seal.Secret{Key: bytes.Repeat([]byte{7}, seal.KeySize)})
	require.NoError(t, err)
	ss, err := kr.State()
	require.NoError(t, err)
	env.Follow(ss, []byte("header"))
	require.Same(t, ss, env.Followed([]byte("header")))
	require.Nil(t, env.Followed([]byte("other")))

	cd = f.Codec(sh) // the state the store follows now
	cd.Stats = &st
	stored, sum = cd.Encode(c, key, value, true)
	stored = bytes.Clone(stored) // Encode seals into the connection's scratch buffer
	require.NotEqual(t, value, stored)
	row = rowcodec.Row{Key: key, Stored: stored, Exp: 0}
	got, opened, err = cd.Open(&row, row.Sum(), sum.(int64), engine.KindInt, nil, nil)
	require.NoError(t, err)
	require.True(t, opened)
	require.Equal(t, value, got)
	other := rowcodec.Row{Key: []byte("other key"), Stored: stored, Exp: 0}
	_, _, err = cd.Open(&other, other.Sum(), sum.(int64), engine.KindInt, nil, nil)
	require.Error(t, err, "bound to its key")

	clear := family.New(env, layout.HiddenTableName("x", "y"), 1, true, true)
	require.False(t, clear.Sealed.Load(), "a hidden table is in the clear unless marked")
	require.Nil(t, clear.Sealing())
	ccd := clear.Codec(sh)
	_, _, err = ccd.Open(&row, row.Sum(), sum.(int64), engine.KindInt, nil, nil)
	require.ErrorIs(t, err, engine.ErrAuth)
}

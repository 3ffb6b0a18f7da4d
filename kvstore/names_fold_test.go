package kvstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// Names compare as SQLite compares identifiers: only ASCII letters fold.
// "Ä" and "ä" are two column families everywhere (creation, look-up,
// integrity check, repair); "Users" and "users" are one.
func TestNamesFoldOnlyASCII(t *testing.T) {
	ctx := context.Background()
	path := tempPath(t)
	db := openAt(t, path, kvstore.Options{})
	pairs := [][2]string{{"Ä", "ä"}, {"Straße", "STRASSE"}, {"Kelvin", "\u212aelvin"}, {"ǅ", "ǆ"}}
	for _, p := range pairs {
		for _, name := range p {
			cf, err := db.CreateColumnFamily(name)
			require.NoError(t, err, name)
			require.NoError(t, cf.Put(b("k"), []byte(name)))
			require.NoError(t, cf.PutTTL(b("t"), []byte(name), time.Hour))
		}
	}
	_, err := db.CreateColumnFamily("Users")
	require.NoError(t, err)
	_, err = db.CreateColumnFamily("USERS")
	require.ErrorIs(t, err, kvstore.ErrExists, "ASCII case still folds")

	check := func() {
		t.Helper()
		rep, err := db.CheckIntegrity(ctx)
		require.NoError(t, err)
		require.Empty(t, rep.Problems)
		require.NoError(t, db.IntegrityCheck(ctx))
		for _, p := range pairs {
			for _, name := range p {
				cf, err := db.OpenColumnFamily(name)
				require.NoError(t, err, name)
				require.Equal(t, name, cf.Name())
				v, err := cf.Get(b("k"))
				require.NoError(t, err)
				require.Equal(t, name, string(v))
			}
		}
	}
	check()
	done, err := db.Repair(ctx)
	require.NoError(t, err)
	require.Empty(t, done, "nothing to repair")
	check()

	// A lost catalog row comes back under its own spelling, not its
	// Unicode-folded twin's.
	require.NoError(t, db.Close())
	rawExec(t, path, `DELETE FROM "__snkv_catalog" WHERE name = 'ä'`)
	db = openAt(t, path, kvstore.Options{})
	require.Error(t, db.IntegrityCheck(ctx))
	done, err = db.Repair(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, done)
	check()

	require.NoError(t, db.DropColumnFamily("ä"))
	_, err = db.OpenColumnFamily("ä")
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	cf, err := db.OpenColumnFamily("Ä")
	require.NoError(t, err, "dropping ä leaves Ä")
	v, err := cf.Get(b("k"))
	require.NoError(t, err)
	require.Equal(t, "Ä", string(v))
	require.NoError(t, db.IntegrityCheck(ctx))
}

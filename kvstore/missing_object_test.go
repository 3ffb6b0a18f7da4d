package kvstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// A hidden object dropped outside snkv (from the sqlite3 shell) is damage:
// reads and writes that need it fail with ErrCorrupt, naming the object and
// pointing to Repair, and never read as a missing key. Only the column
// family's own table, after a drop of the column family, reads as
// ErrNotFound.
func TestMissingHiddenObjectIsCorrupt(t *testing.T) {
	for _, d := range []struct {
		object, sql string
		reads       bool // reads need the object (else only TTL writes do)
	}{
		{"__snkv_view__users", `DROP VIEW "__snkv_view__users"`, true},
		{"__snkv_ttl_k__users", `DROP TABLE "__snkv_ttl_k__users"`, true},
		{"__snkv_ttl_e__users", `DROP TABLE "__snkv_ttl_e__users"`, false},
		{"users", `DROP TABLE "users"`, true},
	} {
		t.Run(d.object, func(t *testing.T) {
			path := tempPath(t)
			db := openAt(t, path, kvstore.Options{})
			cf, err := db.CreateColumnFamily("users")
			require.NoError(t, err)
			require.NoError(t, cf.Put(b("perm"), b("1")))
			require.NoError(t, cf.PutTTL(b("temp"), b("2"), time.Hour))
			require.NoError(t, db.Close())
			rawExec(t, path, d.sql)

			db = openAt(t, path, kvstore.Options{})
			cf, err = db.OpenColumnFamily("users")
			require.NoError(t, err)
			corrupt := func(what string, err error) {
				t.Helper()
				require.Error(t, err, what)
				require.ErrorIs(t, err, kvstore.ErrCorrupt, what)
				require.NotErrorIs(t, err, kvstore.ErrNotFound, what)
				require.Contains(t, err.Error(), d.object, what)
				require.Contains(t, err.Error(), "Repair", what)
			}
			if d.reads {
				_, err = cf.Get(b("perm"))
				corrupt("Get", err)
				_, err = cf.Exists(b("perm"))
				corrupt("Exists", err)
				_, err = cf.TTL(b("temp"))
				corrupt("TTL", err)
				for _, err := range cf.All() {
					corrupt("All", err)
					break
				}
				if err := cf.Put(b("new"), b("3")); err != nil {
					corrupt("Put", err)
				} else {
					_, err = cf.Get(b("new"))
					corrupt("Get after Put", err)
				}
			}
			// A TTL write either works (it needs no view) or is refused:
			// it never rebuilds half of the TTL state over the other half.
			if err := cf.PutTTL(b("new2"), b("4"), time.Hour); err != nil || d.object != "__snkv_view__users" {
				corrupt("PutTTL", err)
			}
			_, err = cf.PurgeExpired(context.Background())
			if d.object != "__snkv_view__users" {
				corrupt("PurgeExpired", err)
			}

			// Repair restores it, and the keys read again.
			_, err = db.Repair(context.Background())
			require.NoError(t, err)
			cf, err = db.OpenColumnFamily("users")
			require.NoError(t, err)
			require.NoError(t, db.IntegrityCheck(context.Background()))
			if d.object != "users" { // the data table's rows are gone with it
				v, err := cf.Get(b("perm"))
				require.NoError(t, err)
				require.Equal(t, b("1"), v)
				_, err = cf.Get(b("temp"))
				require.NoError(t, err)
			}
		})
	}
}

// The column family's own table gone with a drop (by another handle of the
// file, as another process would) is ErrNotFound for every old handle.
func TestDroppedElsewhereIsNotFound(t *testing.T) {
	path := tempPath(t)
	db := openAt(t, path, kvstore.Options{})
	cf, err := db.CreateColumnFamily("users")
	require.NoError(t, err)
	require.NoError(t, cf.PutTTL(b("k"), b("v"), time.Hour))
	_, err = cf.Get(b("k"))
	require.NoError(t, err)

	other := openAt(t, path, kvstore.Options{})
	require.NoError(t, other.DropColumnFamily("users"))

	_, err = cf.Get(b("k"))
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	require.NotErrorIs(t, err, kvstore.ErrCorrupt)
	_, err = cf.TTL(b("k"))
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	for _, err := range cf.All() {
		require.ErrorIs(t, err, kvstore.ErrNotFound)
	}
	err = cf.Put(b("k"), b("v"))
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	require.False(t, errors.Is(err, kvstore.ErrCorrupt), fmt.Sprint(err))
}

package kvstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TestRepairRestoresHiddenObjects damages each hidden object the way a
// shell user could, checks that IntegrityCheck finds it, and that Repair
// gives back a usable store with every row.
func TestRepairRestoresHiddenObjects(t *testing.T) {
	damage := []struct{ name, sql string }{
		{"drop read view", `DROP VIEW "__snkv_view__sessions"`},
		{"drop key index", `DROP TABLE "__snkv_ttl_k__sessions"`},
		{"drop expiry index", `DROP TABLE "__snkv_ttl_e__sessions"`},
		{"drop update trigger", `DROP TRIGGER "__snkv_ttl_tu__sessions"`},
		{"drop insert trigger", `DROP TRIGGER "__snkv_ttl_ti__sessions"`},
		{"drop delete trigger", `DROP TRIGGER "__snkv_ttl_td__sessions"`},
		{"drop checksum trigger", `DROP TRIGGER "__snkv_crc__sessions"`},
		{"delete catalog row", `DELETE FROM "__snkv_catalog" WHERE name = 'sessions'`},
		{"replace TTL view by plain view", `DROP VIEW "__snkv_view__sessions"; CREATE VIEW "__snkv_view__sessions" AS SELECT key, value, crc, NULL AS expire_ms, NULL AS ecrc FROM "sessions"`},
	}
	for _, d := range damage {
		t.Run(d.name, func(t *testing.T) {
			ctx := context.Background()
			path := tempPath(t)
			clk := kvstore.NewManualClock(fmtStart)
			opts := kvstore.Options{Clock: clk}
			db := openAt(t, path, opts)
			cf, err := db.CreateColumnFamily("sessions")
			require.NoError(t, err)
			for i := range 10 {
				k := fmt.Appendf(nil, "k%d", i)
				if i%2 == 0 {
					require.NoError(t, cf.PutTTL(k, k, time.Duration(i+1)*time.Minute))
				} else {
					require.NoError(t, cf.Put(k, k))
				}
			}
			require.NoError(t, db.Close())
			rawExec(t, path, d.sql)

			db = openAt(t, path, opts)
			err = db.IntegrityCheck(ctx)
			require.ErrorIs(t, err, kvstore.ErrCorrupt, "IntegrityCheck finds it")
			done, err := db.Repair(ctx)
			require.NoError(t, err)
			require.NotEmpty(t, done)
			require.NoError(t, db.IntegrityCheck(ctx))
			done, err = db.Repair(ctx)
			require.NoError(t, err)
			require.Empty(t, done, "a sound store needs no repair")

			cf, err = db.OpenColumnFamily("sessions")
			require.NoError(t, err)
			n := 0
			for e, err := range cf.All() {
				require.NoError(t, err)
				require.Equal(t, e.Key, e.Value)
				n++
			}
			require.Equal(t, 10, n, "no row is lost")
			// TTL and writes work again.
			require.NoError(t, cf.PutTTL([]byte("new"), []byte("x"), time.Minute))
			require.NoError(t, cf.Put([]byte("k0"), []byte("permanent")))
			ttl, err := cf.TTL([]byte("k0"))
			require.NoError(t, err)
			require.Equal(t, kvstore.NoTTL, ttl)
			clk.Advance(time.Hour)
			_, err = cf.PurgeExpired(ctx)
			require.NoError(t, err)
			_, err = cf.Get([]byte("k0"))
			require.NoError(t, err, "a permanent key survives the purge")
			require.NoError(t, db.IntegrityCheck(ctx))
			require.NoError(t, db.DropColumnFamily("sessions"))
			_, err = db.CreateColumnFamily("sessions")
			require.NoError(t, err)
		})
	}
}

// TestRepairRestoresCatalogRows: a column family whose name has capitals,
// and a hidden table, each losing its catalog row, come back under their
// own names (and the hidden table under its kind) with every row.
func TestRepairRestoresCatalogRows(t *testing.T) {
	ctx := context.Background()
	path := tempPath(t)
	db := openAt(t, path, kvstore.Options{})
	cf, err := db.CreateColumnFamily("Sessions")
	require.NoError(t, err)
	require.NoError(t, cf.Put([]byte("a"), []byte("1")))
	require.NoError(t, db.Update(ctx, func(tx *kvstore.Tx) error {
		h, err := layer.CreateHiddenTable(tx, "series", "Cpu:Load")
		if err != nil {
			return err
		}
		return tx.CF(h).Put([]byte("h"), []byte("2"))
	}))
	require.NoError(t, db.Close())
	rawExec(t, path,
		`DELETE FROM "__snkv_catalog" WHERE name = 'Sessions'`,
		`DELETE FROM "__snkv_catalog" WHERE name = '__snkv_series:Cpu:Load'`)

	db = openAt(t, path, kvstore.Options{})
	err = db.IntegrityCheck(ctx)
	require.ErrorIs(t, err, kvstore.ErrCorrupt)
	require.ErrorContains(t, err, `"Sessions"`)
	require.ErrorContains(t, err, `"__snkv_series:Cpu:Load"`)
	done, err := db.Repair(ctx)
	require.NoError(t, err)
	require.Contains(t, done, `catalog row of "Sessions" restored`)
	require.Contains(t, done, `catalog row of hidden table "Cpu:Load" (kind "series") restored`)
	require.NoError(t, db.IntegrityCheck(ctx))

	names, err := db.ListColumnFamilies()
	require.NoError(t, err)
	require.Equal(t, []string{"Sessions", kvstore.DefaultColumnFamily}, names, "bytewise order")
	cf, err = db.OpenColumnFamily("Sessions")
	require.NoError(t, err)
	v, err := cf.Get([]byte("a"))
	require.NoError(t, err)
	require.Equal(t, []byte("1"), v)

	hidden, err := layer.ListHiddenTables(ctx, db, "series")
	require.NoError(t, err)
	require.Equal(t, []string{"Cpu:Load"}, hidden)
	h, err := layer.OpenHiddenTable(ctx, db, "series", "Cpu:Load")
	require.NoError(t, err)
	v, err = h.Get([]byte("h"))
	require.NoError(t, err)
	require.Equal(t, []byte("2"), v)
	require.NoError(t, db.Close())
}

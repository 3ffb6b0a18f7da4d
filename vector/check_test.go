package vector_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/internal/v1fixture"
	"github.com/snkv-go/snkv/internal/vectest"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/snkv-go/snkv/vector"
	"github.com/stretchr/testify/require"
)

// A damaged graph row is found by CheckIntegrity and rebuilt by Repair.
func TestDamagedGraphRowIsFoundAndRebuilt(t *testing.T) {
	set := vectest.Generate(vectest.Clustered(500, 10, 8))
	for _, open := range []bool{false, true} {
		db, _ := tempStore(t, kvstore.Options{})
		ix, err := vector.Open(ctx, db, "v", vector.Options{Dim: 8})
		require.NoError(t, err)
		fill(t, ix, set.Base, 500, nil)
		if !open {
			require.NoError(t, ix.Close())
		} else {
			t.Cleanup(func() { _ = ix.Close() })
			require.Eventually(t, func() bool { // the background writer saved every link
				st, err := ix.Stats(ctx)
				return err == nil && st.Unpersisted == 0
			}, 10*time.Second, 5*time.Millisecond)
		}
		require.NoError(t, db.IntegrityCheck(ctx))
		g, err := layer.OpenHiddenTable(ctx, db, "vector", "v/graph")
		require.NoError(t, err)
		require.NoError(t, g.Put([]byte{0, 0, 0, 7}, []byte("garbage")))
		require.NoError(t, g.Put([]byte{0, 0, 0, 9}, append(make([]byte, 9), 1, 0xff, 0xff, 0xff, 0x7f))) // a link far out of range
		free, err := layer.OpenHiddenTable(ctx, db, "vector", "v/free")
		require.NoError(t, err)
		require.NoError(t, free.Put([]byte{0, 0, 0, 3}, nil)) // node 3 holds a key
		rep, err := db.CheckIntegrity(ctx)
		require.NoError(t, err)
		require.Len(t, rep.Problems, 3, "%q", rep.Problems)
		require.Contains(t, rep.Problems[2], "node 3 is free and holds key")
		require.NoError(t, free.Delete([]byte{0, 0, 0, 3}))
		require.ErrorIs(t, db.IntegrityCheck(ctx), kvstore.ErrCorrupt)
		fixed, err := db.Repair(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{`vector index "v": rebuilt 2 damaged graph rows`}, fixed)
		require.NoError(t, db.IntegrityCheck(ctx))
		for _, k := range [][]byte{{0, 0, 0, 7}, {0, 0, 0, 9}} {
			_, err := g.Get(k)
			require.NoError(t, err, "the node's links are saved again")
		}
	}
}

// Vectors, values, metadata and links are sealed in an encrypted store: the
// file holds none of them in the clear, and a wrong key opens nothing.
func TestEncryptedStoreHoldsNoVectorPlaintext(t *testing.T) {
	enc := &kvstore.Encryption{Password: []byte("pw"), KDF: kvstore.LightKDF}
	db, path := tempStore(t, kvstore.Options{Encryption: enc})
	ix := openIndex(t, db, "v", vector.Options{Dim: 8})
	vec := []float32{1.0000001, 2.5, 3.25, 4.125, 5.0625, 6.03125, 7.015625, 8.0078125}
	require.NoError(t, ix.Put(ctx, []byte("doc-1"), vec, vector.Put{Value: []byte("VALUE-PLAINTEXT"), Meta: map[string]string{"lang": "META-PLAINTEXT"}}))
	for i := range 50 {
		require.NoError(t, ix.Put(ctx, key(i), []float32{float32(i), 1, 2, 3, 4, 5, 6, 7}, vector.Put{}))
	}
	require.NoError(t, ix.Close())
	require.NoError(t, db.Close())
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	wal, _ := os.ReadFile(path + "-wal")
	raw = append(raw, wal...)
	for _, secret := range [][]byte{floatBytes(vec[1:5]), []byte("VALUE-PLAINTEXT"), []byte("META-PLAINTEXT")} {
		require.NotContains(t, string(raw), string(secret))
	}
	require.Contains(t, string(raw), "doc-1", "keys stay in the clear, as in column families")
	_, err = kvstore.Open(path, kvstore.Options{Encryption: &kvstore.Encryption{Password: []byte("wrong")}})
	require.ErrorIs(t, err, kvstore.ErrAuth)
	db = openStore(t, path, kvstore.Options{Encryption: enc})
	ix = openIndex(t, db, "v", vector.Options{})
	e, err := ix.Get(ctx, []byte("doc-1"))
	require.NoError(t, err)
	require.Equal(t, vec, e.Vector)
	hits, err := ix.Search(ctx, vec, vector.Query{K: 1})
	require.NoError(t, err)
	require.Equal(t, "doc-1", string(hits[0].Key))
}

func floatBytes(v []float32) []byte {
	var b []byte
	for _, x := range v {
		u := mathFloat32bits(x)
		b = append(b, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
	}
	return b
}

// Upgrade converts the vector tables of a version-1 store like any hidden
// table, and the index reads the same after it.
func TestUpgradeCoversVectorTables(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	require.NoError(t, v1fixture.Create(path, epoch.UnixMilli(), map[string][]v1fixture.Row{"default": nil}))
	db := openStore(t, path, kvstore.Options{})
	v, err := db.FormatVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, v)
	set := vectest.Generate(vectest.Clustered(300, 5, 8))
	ix, err := vector.Open(ctx, db, "v", vector.Options{Dim: 8})
	require.NoError(t, err)
	fill(t, ix, set.Base, 100, nil)
	require.NoError(t, ix.Close())
	require.NoError(t, db.Upgrade(ctx))
	v, err = db.FormatVersion(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, v)
	require.NoError(t, db.IntegrityCheck(ctx))
	rep, err := db.CheckIntegrity(ctx)
	require.NoError(t, err)
	require.Zero(t, rep.Unverified, "every vector row has its checksum after Upgrade")
	ix = openIndex(t, db, "v", vector.Options{})
	for i := 0; i < 300; i += 29 {
		hits, err := ix.Search(ctx, set.Base[i], vector.Query{K: 1})
		require.NoError(t, err)
		require.Equal(t, key(i), hits[0].Key)
	}
}

// RepairFile opens an encrypted store without its secret: the vector
// layer cannot read its rows there and leaves them alone instead of
// failing the repair of the rest.
func TestRepairFileOfEncryptedStoreWithIndex(t *testing.T) {
	enc := &kvstore.Encryption{Password: []byte("pw"), KDF: kvstore.LightKDF}
	db, path := tempStore(t, kvstore.Options{Encryption: enc})
	ix, err := vector.Open(ctx, db, "v", vector.Options{Dim: 2})
	require.NoError(t, err)
	require.NoError(t, ix.Put(ctx, []byte("a"), []float32{1, 2}, vector.Put{}))
	require.NoError(t, ix.Close())
	require.NoError(t, db.Close())
	fixed, err := kvstore.RepairFile(ctx, path, kvstore.Options{})
	require.NoError(t, err)
	require.Empty(t, fixed)
}

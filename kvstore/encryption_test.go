package kvstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/snkv-go/snkv/internal/layer"
	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// fastKDF keeps password tests quick; the default cost is measured by the
// benchmarks.
var fastKDF = kvstore.KDF{Time: 1, MemoryKiB: 64, Threads: 1}

func pw(p string) *kvstore.Encryption {
	return &kvstore.Encryption{Password: []byte(p), KDF: fastKDF}
}

func rawKey(b byte) *kvstore.Encryption {
	return &kvstore.Encryption{Key: bytes.Repeat([]byte{b}, 32)}
}

// fileSum is the SHA-256 of a store's main file and WAL, to show that a
// refused open wrote nothing.
func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	h := sha256.New()
	for _, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		if err == nil {
			h.Write(b)
		}
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// rawValue reads the stored value of key in table through database/sql, as
// another tool would.
func rawValue(t *testing.T, path, table string, key []byte) []byte {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	var v []byte
	require.NoError(t, db.QueryRow(`SELECT value FROM "`+table+`" WHERE key = ?`, key).Scan(&v))
	return v
}

func execRaw(t *testing.T, path, q string, args ...any) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(q, args...)
	require.NoError(t, err)
}

func TestEncryptionRoundTrip(t *testing.T) {
	for _, enc := range []*kvstore.Encryption{pw("correct horse"), rawKey(7)} {
		path := tempPath(t)
		clock := kvstore.NewManualClock(time.UnixMilli(1_000_000))
		s, err := kvstore.Open(path, kvstore.Options{Encryption: enc, Clock: clock})
		require.NoError(t, err)
		require.True(t, s.Encrypted())
		cf := s.Default()
		require.NoError(t, cf.Put([]byte("a"), []byte("secret value a")))
		require.NoError(t, cf.Put([]byte("b"), nil))
		require.NoError(t, cf.PutTTL([]byte("c"), []byte("short lived"), time.Minute))
		require.NoError(t, s.Update(context.Background(), func(tx *kvstore.Tx) error {
			for i := range 100 {
				if err := tx.CF(cf).Put(fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "value %d", i)); err != nil {
					return err
				}
			}
			return nil
		}))
		other, err := s.CreateColumnFamily("other")
		require.NoError(t, err)
		var b kvstore.Batch
		b.Put([]byte("x"), []byte("batched"))
		b.PutTTL([]byte("y"), []byte("batched ttl"), time.Hour)
		require.NoError(t, other.Apply(context.Background(), &b))
		ok, err := other.PutIfAbsent([]byte("z"), []byte("if absent"))
		require.NoError(t, err)
		require.True(t, ok)

		check := func(s *kvstore.Store) {
			cf := s.Default()
			v, err := cf.Get([]byte("a"))
			require.NoError(t, err)
			require.Equal(t, "secret value a", string(v))
			v, err = cf.Get([]byte("b"))
			require.NoError(t, err)
			require.Equal(t, []byte{}, v)
			v, d, err := cf.GetTTL([]byte("c"))
			require.NoError(t, err)
			require.Equal(t, "short lived", string(v))
			require.Equal(t, time.Minute, d)
			got := contents(t, cf)
			require.Len(t, got, 103)
			require.Equal(t, kv{"k042", "value 42"}, got[45])
			// Borrowed, reverse and prefix scans open values too.
			n := 0
			for e, err := range cf.Scan(kvstore.IterOptions{Prefix: []byte("k0"), Reverse: true, Borrow: true}) {
				require.NoError(t, err)
				var i int
				_, err = fmt.Sscanf(string(e.Key), "k%03d", &i)
				require.NoError(t, err)
				require.Equal(t, fmt.Sprintf("value %d", i), string(e.Value))
				n++
			}
			require.Equal(t, 100, n)
			o, err := s.OpenColumnFamily("other")
			require.NoError(t, err)
			require.Equal(t, []kv{{"x", "batched"}, {"y", "batched ttl"}, {"z", "if absent"}}, contents(t, o))
			rep, err := s.CheckIntegrity(context.Background())
			require.NoError(t, err)
			require.Empty(t, rep.Problems)
		}
		check(s)
		require.NoError(t, s.Close())

		// The file holds no value in the clear.
		raw := rawValue(t, path, "default", []byte("a"))
		require.NotContains(t, string(raw), "secret")
		require.Len(t, raw, len("secret value a")+40)

		before := fileSum(t, path)
		_, err = kvstore.Open(path, kvstore.Options{})
		require.ErrorIs(t, err, kvstore.ErrAuth)
		wrong := pw("wrong")
		if enc.Key != nil {
			wrong = rawKey(8)
		}
		_, err = kvstore.Open(path, kvstore.Options{Encryption: wrong})
		require.ErrorIs(t, err, kvstore.ErrAuth)
		require.NotContains(t, err.Error(), "correct horse")
		require.Equal(t, before, fileSum(t, path), "a refused open changed the file")

		s = openAt(t, path, kvstore.Options{Encryption: enc, Clock: clock})
		check(s)
		ro := openAt(t, path, kvstore.Options{Encryption: enc, Clock: clock, ReadOnly: true})
		check(ro)
	}
}

func TestEncryptionBadSecrets(t *testing.T) {
	for name, enc := range map[string]*kvstore.Encryption{
		"empty password": {Password: []byte{}},
		"short key":      {Key: make([]byte, 16)},
		"both":           {Password: []byte("p"), Key: make([]byte, 32)},
		"neither":        {},
		"bad cost":       {Password: []byte("p"), KDF: kvstore.KDF{Time: 1, MemoryKiB: 1, Threads: 1}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := kvstore.Open(tempPath(t), kvstore.Options{Encryption: enc})
			require.ErrorIs(t, err, kvstore.ErrInvalidOption)
		})
	}
}

func TestEncryptInPlaceRekeyRemove(t *testing.T) {
	skipSealedSuite(t) // starts from a store in the clear
	path := tempPath(t)
	s, err := kvstore.Open(path, kvstore.Options{UpgradeBatch: 7})
	require.NoError(t, err)
	cf := s.Default()
	for i := range 50 {
		require.NoError(t, cf.Put(fmt.Appendf(nil, "k%02d", i), fmt.Appendf(nil, "plain %d", i)))
	}
	require.NoError(t, cf.PutTTL([]byte("ttl"), []byte("expiring"), time.Hour))
	require.NoError(t, s.Close())
	require.Contains(t, string(rawValue(t, path, "default", []byte("k01"))), "plain")

	// Open with a password, asked to encrypt: encrypted in place.
	inPlace := pw("one")
	inPlace.EncryptInPlace = true
	s, err = kvstore.Open(path, kvstore.Options{Encryption: inPlace, UpgradeBatch: 7})
	require.NoError(t, err)
	want := contents(t, s.Default())
	require.Len(t, want, 51)
	require.NotContains(t, string(rawValue(t, path, "default", []byte("k01"))), "plain")
	_, d, err := s.Default().GetTTL([]byte("ttl"))
	require.NoError(t, err)
	require.Greater(t, d, 59*time.Minute)

	require.NoError(t, s.Rekey(context.Background(), kvstore.Encryption{Key: bytes.Repeat([]byte{1}, 32)}))
	require.Equal(t, want, contents(t, s.Default()))
	require.NoError(t, s.Close())
	_, err = kvstore.Open(path, kvstore.Options{Encryption: pw("one")})
	require.ErrorIs(t, err, kvstore.ErrAuth)

	s, err = kvstore.Open(path, kvstore.Options{Encryption: rawKey(1)})
	require.NoError(t, err)
	require.Equal(t, want, contents(t, s.Default()))
	_, d, err = s.Default().GetTTL([]byte("ttl"))
	require.NoError(t, err)
	require.Greater(t, d, 59*time.Minute)
	require.NoError(t, s.RemoveEncryption(context.Background()))
	require.False(t, s.Encrypted())
	require.NoError(t, s.Close())

	s = openAt(t, path, kvstore.Options{})
	require.Equal(t, want, contents(t, s.Default()))
	require.Contains(t, string(rawValue(t, path, "default", []byte("k01"))), "plain")
}

func TestEncryptionBindsValuesToTheirPlace(t *testing.T) {
	path := tempPath(t)
	s, err := kvstore.Open(path, kvstore.Options{Encryption: rawKey(3)})
	require.NoError(t, err)
	a, err := s.CreateColumnFamily("a")
	require.NoError(t, err)
	b, err := s.CreateColumnFamily("b")
	require.NoError(t, err)
	require.NoError(t, a.Put([]byte("k"), []byte("from a")))
	require.NoError(t, b.Put([]byte("k"), []byte("from b")))
	require.NoError(t, a.Put([]byte("k2"), []byte("other key")))
	require.NoError(t, s.Close())

	// The same key in another column family: value and checksum copied
	// whole (the checksum covers key and stored bytes, so it still
	// matches).
	execRaw(t, path, `UPDATE b SET value = (SELECT value FROM a WHERE key = x'6b'), crc = (SELECT crc FROM a WHERE key = x'6b') WHERE key = x'6b'`)
	// Another key of the same column family (the trigger marks it
	// unverified).
	execRaw(t, path, `UPDATE a SET value = (SELECT value FROM a WHERE key = x'6b') WHERE key = CAST('k2' AS BLOB)`)

	s = openAt(t, path, kvstore.Options{Encryption: rawKey(3)})
	b, err = s.OpenColumnFamily("b")
	require.NoError(t, err)
	_, err = b.Get([]byte("k"))
	require.ErrorIs(t, err, kvstore.ErrAuth)
	a, err = s.OpenColumnFamily("a")
	require.NoError(t, err)
	_, err = a.Get([]byte("k2"))
	require.ErrorIs(t, err, kvstore.ErrAuth)
	v, err := a.Get([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, "from a", string(v))
	rep, err := s.CheckIntegrity(context.Background())
	require.NoError(t, err)
	require.Len(t, rep.Problems, 2)
	require.Contains(t, rep.Problems[0]+rep.Problems[1], `key "k2"`) // k2, named
}

func TestEncryptionRefusesValuesFromAnotherStore(t *testing.T) {
	p1, p2 := tempPath(t), tempPath(t)
	for _, p := range []string{p1, p2} {
		s, err := kvstore.Open(p, kvstore.Options{Encryption: rawKey(9)})
		require.NoError(t, err)
		require.NoError(t, s.Default().Put([]byte("k"), []byte("value of "+p)))
		require.NoError(t, s.Close())
	}
	execRaw(t, p2, `ATTACH ? AS o`, p1) // per connection: copy within one statement below
	db, err := sql.Open("sqlite", p2)
	require.NoError(t, err)
	defer db.Close()
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(context.Background(), `ATTACH ? AS o`, p1)
	require.NoError(t, err)
	_, err = conn.ExecContext(context.Background(), `UPDATE main."default" SET value = (SELECT value FROM o."default" WHERE key = x'6b'), crc = (SELECT crc FROM o."default" WHERE key = x'6b') WHERE key = x'6b'`)
	require.NoError(t, err)
	require.NoError(t, conn.Close())

	s := openAt(t, p2, kvstore.Options{Encryption: rawKey(9)})
	_, err = s.Default().Get([]byte("k"))
	require.ErrorIs(t, err, kvstore.ErrAuth)
}

func TestEncryptionTamperedHeaderAndValues(t *testing.T) {
	skipSealedSuite(t) // starts from a store in the clear
	path := tempPath(t)
	s, err := kvstore.Open(path, kvstore.Options{Encryption: pw("p")})
	require.NoError(t, err)
	require.NoError(t, s.Default().Put([]byte("k"), []byte("value")))
	require.NoError(t, s.Close())

	// A flipped byte in the sealed value: the checksum catches it first.
	// (Byte 31 is replaced by one it is not: a constant would change
	// nothing one time in 256.)
	execRaw(t, path, `UPDATE "default" SET value = CAST(substr(value, 1, 30) || CASE WHEN substr(value, 31, 1) = x'00' THEN x'01' ELSE x'00' END || substr(value, 32) AS BLOB) WHERE key = x'6b'`)
	s = openAt(t, path, kvstore.Options{Encryption: pw("p")})
	_, err = s.Default().Get([]byte("k"))
	require.Error(t, err)
	require.True(t, errorsIsAny(err, kvstore.ErrAuth, kvstore.ErrCorrupt), "%v", err)
	require.NoError(t, s.Close())

	// A truncated one.
	execRaw(t, path, `UPDATE "default" SET value = CAST(substr(value, 1, 10) AS BLOB) WHERE key = x'6b'`)
	s = openAt(t, path, kvstore.Options{Encryption: pw("p")})
	_, err = s.Default().Get([]byte("k"))
	require.True(t, errorsIsAny(err, kvstore.ErrAuth, kvstore.ErrCorrupt), "%v", err)
	require.NoError(t, s.Close())

	// A changed cost in the header: refused (its checksum fails) before
	// anything is derived with it.
	execRaw(t, path, `UPDATE __snkv_meta SET value = CAST(substr(value, 1, 30) || CASE WHEN substr(value, 31, 1) = x'07' THEN x'08' ELSE x'07' END || substr(value, 32) AS BLOB) WHERE name = 'encryption'`)
	before := fileSum(t, path)
	_, err = kvstore.Open(path, kvstore.Options{Encryption: pw("p")})
	require.True(t, errorsIsAny(err, kvstore.ErrAuth, kvstore.ErrCorrupt), "%v", err)
	require.Equal(t, before, fileSum(t, path))
	// A header cut short.
	execRaw(t, path, `UPDATE __snkv_meta SET value = CAST(substr(value, 1, 20) AS BLOB) WHERE name = 'encryption'`)
	_, err = kvstore.Open(path, kvstore.Options{Encryption: pw("p")})
	require.True(t, errorsIsAny(err, kvstore.ErrAuth, kvstore.ErrCorrupt), "%v", err)
	_, err = kvstore.Open(path, kvstore.Options{})
	require.ErrorIs(t, err, kvstore.ErrAuth)
}

func TestEncryptionReadOnlyNeverConverts(t *testing.T) {
	skipSealedSuite(t) // starts from a store in the clear
	path := tempPath(t)
	s, err := kvstore.Open(path, kvstore.Options{})
	require.NoError(t, err)
	require.NoError(t, s.Default().Put([]byte("k"), []byte("v")))
	require.NoError(t, s.Close())
	before := fileSum(t, path)
	inPlace := pw("p")
	inPlace.EncryptInPlace = true
	_, err = kvstore.Open(path, kvstore.Options{ReadOnly: true, Encryption: inPlace})
	require.ErrorIs(t, err, kvstore.ErrReadOnly)
	require.Equal(t, before, fileSum(t, path))
}

func TestHiddenTablesSealedOnlyWhenAsked(t *testing.T) {
	path := tempPath(t)
	s := openAt(t, path, kvstore.Options{Encryption: rawKey(5)})
	var plain, sealed *kvstore.ColumnFamily
	require.NoError(t, s.Update(context.Background(), func(tx *kvstore.Tx) error {
		var err error
		if plain, err = layer.CreateHiddenTable(tx, "layer", "structure"); err != nil {
			return err
		}
		sealed, err = layer.CreateHiddenTable(tx, "layer", "payloads", layer.HiddenSealed)
		return err
	}))
	require.NoError(t, plain.Put([]byte("k"), []byte("visible")))
	require.NoError(t, sealed.Put([]byte("k"), []byte("hidden")))
	require.NoError(t, s.Close())
	require.Equal(t, "visible", string(rawValue(t, path, layer.HiddenTableName("layer", "structure"), []byte("k"))))
	require.NotContains(t, string(rawValue(t, path, layer.HiddenTableName("layer", "payloads"), []byte("k"))), "hidden")
	s = openAt(t, path, kvstore.Options{Encryption: rawKey(5)})
	h, err := layer.OpenHiddenTable(context.Background(), s, "layer", "payloads")
	require.NoError(t, err)
	v, err := h.Get([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, "hidden", string(v))
}

func errorsIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// skipSealedSuite skips a test that needs stores in the clear when the
// suite runs against encrypted ones.
func skipSealedSuite(t *testing.T) {
	t.Helper()
	if kvstore.SealedSuite() {
		t.Skip("needs a store in the clear (SNKV_TEST_ENCRYPTION=1)")
	}
}

func TestSealHiddenTableSealsExistingValues(t *testing.T) {
	path := tempPath(t)
	s := openAt(t, path, kvstore.Options{Encryption: rawKey(6), UpgradeBatch: 3})
	h := createHidden(t, s, "layer", "old")
	for i := range 10 {
		require.NoError(t, h.Put(fmt.Appendf(nil, "k%d", i), fmt.Appendf(nil, "in the clear %d", i)))
	}
	require.Contains(t, string(rawValue(t, path, layer.HiddenTableName("layer", "old"), []byte("k4"))), "in the clear")
	require.NoError(t, layer.SealHiddenTable(context.Background(), s, "layer", "old"))
	require.NotContains(t, string(rawValue(t, path, layer.HiddenTableName("layer", "old"), []byte("k4"))), "in the clear")
	v, err := h.Get([]byte("k4"))
	require.NoError(t, err)
	require.Equal(t, "in the clear 4", string(v))
	require.NoError(t, layer.SealHiddenTable(context.Background(), s, "layer", "old"), "again: nothing to do")
	rep, err := s.CheckIntegrity(context.Background())
	require.NoError(t, err)
	require.Empty(t, rep.Problems)
}

func TestRepairFileNeedsNoSecret(t *testing.T) {
	path := tempPath(t)
	s, err := kvstore.Open(path, kvstore.Options{Encryption: rawKey(4)})
	require.NoError(t, err)
	require.NoError(t, s.Default().PutTTL([]byte("k"), []byte("v"), time.Hour))
	require.NoError(t, s.Close())
	execRaw(t, path, `DROP VIEW "__snkv_view__default"`)
	_, err = kvstore.Open(path, kvstore.Options{})
	require.ErrorIs(t, err, kvstore.ErrAuth)
	fixed, err := kvstore.RepairFile(context.Background(), path, kvstore.Options{})
	require.NoError(t, err)
	require.NotEmpty(t, fixed)
	s = openAt(t, path, kvstore.Options{Encryption: rawKey(4)})
	v, err := s.Default().Get([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, "v", string(v))
	rep, err := s.CheckIntegrity(context.Background())
	require.NoError(t, err)
	require.Empty(t, rep.Problems)
}

func TestBackupOfEncryptedStoreStaysEncrypted(t *testing.T) {
	s := openTemp(t, kvstore.Options{Encryption: rawKey(2)})
	require.NoError(t, s.Default().Put([]byte("k"), []byte("backed up sealed")))
	dest := filepath.Join(t.TempDir(), "copy.db")
	require.NoError(t, s.Backup(context.Background(), dest))
	require.NotContains(t, string(rawValue(t, dest, "default", []byte("k"))), "sealed")
	_, err := kvstore.Open(dest, kvstore.Options{})
	require.ErrorIs(t, err, kvstore.ErrAuth)
	c := openAt(t, dest, kvstore.Options{Encryption: rawKey(2)})
	v, err := c.Default().Get([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, "backed up sealed", string(v))
}

func TestEncryptedTTLChangesKeepValues(t *testing.T) {
	clock := kvstore.NewManualClock(time.UnixMilli(5_000_000))
	s := openTemp(t, kvstore.Options{Encryption: rawKey(1), Clock: clock})
	cf := s.Default()
	require.NoError(t, cf.Put([]byte("a"), []byte("alpha")))
	require.NoError(t, cf.Expire([]byte("a"), time.Minute))
	v, d, err := cf.GetTTL([]byte("a"))
	require.NoError(t, err)
	require.Equal(t, "alpha", string(v))
	require.Equal(t, time.Minute, d)
	require.NoError(t, cf.Persist([]byte("a")))
	v, d, err = cf.GetTTL([]byte("a"))
	require.NoError(t, err)
	require.Equal(t, "alpha", string(v))
	require.Equal(t, kvstore.NoTTL, d)
	require.NoError(t, cf.PutTTL([]byte("b"), []byte("beta"), time.Second))
	clock.Advance(2 * time.Second)
	_, err = cf.Get([]byte("b"))
	require.ErrorIs(t, err, kvstore.ErrNotFound)
	n, err := cf.PurgeExpired(context.Background())
	require.NoError(t, err)
	require.LessOrEqual(t, n, 1)
	rep, err := s.CheckIntegrity(context.Background())
	require.NoError(t, err)
	require.Empty(t, rep.Problems)
}

// After encrypting in place, and after a re-key, nothing of the old form is
// left in the file: not in free space, freed pages or the WAL.
func TestConversionsLeaveNoOldBytes(t *testing.T) {
	skipSealedSuite(t)
	path := tempPath(t)
	s, err := kvstore.Open(path, kvstore.Options{UpgradeBatch: 16})
	require.NoError(t, err)
	for i := range 300 {
		require.NoError(t, s.Default().Put(fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "PLAINTEXT-MARKER-%03d", i)))
	}
	require.NoError(t, s.Default().Delete([]byte("k007"))) // a freed cell too
	require.NoError(t, s.Encrypt(context.Background(), kvstore.Encryption{Key: bytes.Repeat([]byte{1}, 32)}))
	for _, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		if err == nil {
			n := bytes.Count(b, []byte("PLAINTEXT-MARKER"))
			first := bytes.Index(b, []byte("PLAINTEXT-MARKER"))
			require.Zero(t, n, "%s: %d values in the clear left, the first at byte %d (page %d)", p, n, first, first/4096+1)
		}
	}
	var before [][]byte
	raw := func() []byte { return rawValue(t, path, "default", []byte("k100")) }
	before = append(before, raw())
	require.NoError(t, s.Rekey(context.Background(), kvstore.Encryption{Key: bytes.Repeat([]byte{2}, 32)}))
	require.NotEqual(t, before[0], raw())
	for _, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		if err == nil {
			require.False(t, bytes.Contains(b, before[0]), "the value sealed under the old key is still in %s", p)
		}
	}
	require.NoError(t, s.Close())
}

// cancelAfter is a context cancelled once its Err has been asked n times:
// a conversion it runs stops part way, at a batch boundary or inside one.
// Err is called from other goroutines too (context.AfterFunc).
type cancelAfter struct {
	context.Context
	n     int64
	asked atomic.Int64
	once  sync.Once
	done  chan struct{}
}

func newCancelAfter(n int) *cancelAfter {
	return &cancelAfter{Context: context.Background(), n: int64(n), done: make(chan struct{})}
}

func (c *cancelAfter) Err() error {
	if c.asked.Add(1) >= c.n {
		c.once.Do(func() { close(c.done) })
		return context.Canceled
	}
	return nil
}

func (c *cancelAfter) Done() <-chan struct{} { return c.done }

// A conversion that fails before recording its job changes nothing; one
// that fails part way is finished by the next conversion (or Open).
func TestFailedConversionsCancelOrResume(t *testing.T) {
	path := tempPath(t)
	s, err := kvstore.Open(path, kvstore.Options{Encryption: rawKey(1), UpgradeBatch: 4})
	require.NoError(t, err)
	for i := range 100 {
		require.NoError(t, s.Default().Put(fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "v%d", i)))
	}
	want := contents(t, s.Default())

	gone, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, s.Rekey(gone, *rawKey(2)), context.Canceled)
	ro, err := kvstore.Open(path, kvstore.Options{Encryption: rawKey(1), ReadOnly: true})
	require.NoError(t, err, "a re-key that recorded nothing leaves the old key")
	require.NoError(t, ro.Close())
	require.NoError(t, s.Rekey(context.Background(), *rawKey(2)), "and can be run again on the same store")
	require.Equal(t, want, contents(t, s.Default()))

	var stopped error
	for n := 5; stopped == nil; n += 5 {
		// Find a point where the re-key has recorded its job and then
		// stops: the first error comes from the header's own write.
		stopped = s.Rekey(newCancelAfter(n), *rawKey(3))
		if stopped == nil {
			t.Fatalf("the re-key finished within %d checks of its context", n)
		}
		if !s.Encrypted() {
			t.Fatal("a failed re-key left the store in the clear")
		}
		// Did it record the job? Then both keys open the store now.
		s2, err := kvstore.Open(path, kvstore.Options{Encryption: rawKey(3), ReadOnly: true})
		if err != nil {
			stopped = nil // it cancelled before recording: try a later point
			continue
		}
		require.Equal(t, want, contents(t, s2.Default()), "both forms read while the job is pending")
		require.NoError(t, s2.Close())
	}
	require.Equal(t, want, contents(t, s.Default()))
	require.NoError(t, s.RemoveEncryption(context.Background()), "finishes the re-key, then decrypts")
	require.False(t, s.Encrypted())
	require.NoError(t, s.Close())
	s = openAt(t, path, kvstore.Options{})
	require.Equal(t, want, contents(t, s.Default()))
}

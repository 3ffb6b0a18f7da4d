package kvstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/snkv-go/snkv/kvstore"
)

// Open a store file, write a key and read it back.
func Example() {
	dir, err := os.MkdirTemp("", "snkv-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	db, err := kvstore.Open(filepath.Join(dir, "app.db"), kvstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	if err := db.Put([]byte("greeting"), []byte("hello")); err != nil {
		log.Fatal(err)
	}
	v, err := db.Get([]byte("greeting"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", v)

	_, err = db.Get([]byte("missing"))
	fmt.Println(errors.Is(err, kvstore.ErrNotFound))
	// Output:
	// hello
	// true
}

// Column families are isolated key spaces, each a table of its own.
func ExampleStore_CreateColumnFamily() {
	db, err := kvstore.Open("", kvstore.Options{}) // in memory
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	users, err := db.CreateColumnFamily("users")
	if err != nil {
		log.Fatal(err)
	}
	if err := users.Put([]byte("alice"), []byte("admin")); err != nil {
		log.Fatal(err)
	}
	if err := db.Put([]byte("alice"), []byte("default CF")); err != nil {
		log.Fatal(err)
	}

	v, _ := users.Get([]byte("alice"))
	fmt.Printf("users: %s\n", v)
	v, _ = db.Get([]byte("alice"))
	fmt.Printf("default: %s\n", v)

	_, err = db.CreateColumnFamily("users")
	fmt.Println(errors.Is(err, kvstore.ErrExists))
	_, err = db.CreateColumnFamily("__hidden")
	fmt.Println(errors.Is(err, kvstore.ErrReservedName))

	names, _ := db.ListColumnFamilies()
	fmt.Println(names)
	// Output:
	// users: admin
	// default: default CF
	// true
	// true
	// [default users]
}

// Update commits every write of the function atomically, across column
// families, or none of them if it returns an error.
func ExampleStore_Update() {
	db, err := kvstore.Open("", kvstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	accounts, err := db.CreateColumnFamily("accounts")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	err = db.Update(ctx, func(tx *kvstore.Tx) error {
		a := tx.CF(accounts)
		if err := a.Put([]byte("alice"), []byte("70")); err != nil {
			return err
		}
		if err := a.Put([]byte("bob"), []byte("30")); err != nil {
			return err
		}
		tx.OnCommit(func() { fmt.Println("committed") })
		return tx.Put([]byte("last-transfer"), []byte("alice->bob")) // default CF
	})
	if err != nil {
		log.Fatal(err)
	}

	errAbort := errors.New("insufficient funds")
	err = db.Update(ctx, func(tx *kvstore.Tx) error {
		if err := tx.CF(accounts).Put([]byte("alice"), []byte("-1000")); err != nil {
			return err
		}
		return errAbort // rolls back the Put above
	})
	fmt.Println(errors.Is(err, errAbort))

	v, _ := accounts.Get([]byte("alice"))
	fmt.Printf("alice: %s\n", v)
	// Output:
	// committed
	// true
	// alice: 70
}

// View runs a read-only transaction: all its reads see one snapshot, and a
// write in it is refused.
func ExampleStore_View() {
	db, err := kvstore.Open("", kvstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	for _, k := range []string{"a", "b", "c"} {
		if err := db.Put([]byte(k), []byte("v-"+k)); err != nil {
			log.Fatal(err)
		}
	}

	err = db.View(context.Background(), func(tx *kvstore.Tx) error {
		n, err := tx.Count()
		if err != nil {
			return err
		}
		vals, err := tx.GetMany([][]byte{[]byte("a"), []byte("x"), []byte("c")})
		if err != nil {
			return err
		}
		fmt.Printf("%d keys; a=%s x=%v c=%s\n", n, vals[0], vals[1], vals[2])
		err = tx.Put([]byte("d"), []byte("nope"))
		fmt.Println(errors.Is(err, kvstore.ErrReadOnlyTx))
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// 3 keys; a=v-a x=[] c=v-c
	// true
}

// Iterations yield (Entry, error) pairs: a failure arrives as the last
// pair's error and never ends the loop silently.
func ExampleColumnFamily_Prefix() {
	db, err := kvstore.Open("", kvstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	for _, k := range []string{"user:carol", "user:alice", "admin:root", "user:bob", "zed"} {
		if err := db.Put([]byte(k), []byte(k[len(k)-1:])); err != nil {
			log.Fatal(err)
		}
	}

	for e, err := range db.Prefix([]byte("user:")) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s=%s\n", e.Key, e.Value)
	}

	fmt.Println("range [b, user:c) backwards:")
	for e, err := range db.Scan(kvstore.IterOptions{Start: []byte("b"), End: []byte("user:c"), Reverse: true}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s\n", e.Key)
	}
	// Output:
	// user:alice=e
	// user:bob=b
	// user:carol=l
	// range [b, user:c) backwards:
	// user:bob
	// user:alice
}

// With Borrow an iteration allocates nothing per row: the key and value
// point into the store's memory and are valid only until the next step, so
// a loop that keeps something copies it.
func ExampleColumnFamily_Scan_borrow() {
	db, err := kvstore.Open("", kvstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	for _, k := range []string{"a", "bb", "ccc"} {
		if err := db.Put([]byte(k), []byte("value of "+k)); err != nil {
			log.Fatal(err)
		}
	}

	total := 0
	var longest []byte
	for e, err := range db.Scan(kvstore.IterOptions{Borrow: true}) {
		if err != nil {
			log.Fatal(err)
		}
		total += len(e.Value) // reading in the loop body needs no copy
		if len(e.Key) > len(longest) {
			longest = append(longest[:0], e.Key...) // keeping it does
		}
	}
	fmt.Println(total, string(longest))
	// Output:
	// 33 ccc
}

// A Cursor moves freely: Seek finds the first key at or after a key, Next
// and Prev step from there. It holds a snapshot until Close.
func ExampleColumnFamily_Cursor() {
	db, err := kvstore.Open("", kvstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	for _, k := range []string{"2024-01", "2024-03", "2024-07", "2025-02"} {
		if err := db.Put([]byte(k), nil); err != nil {
			log.Fatal(err)
		}
	}

	c, err := db.Cursor(kvstore.IterOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if c.Seek([]byte("2024-05")) {
		fmt.Printf("seek 2024-05 -> %s\n", c.Key())
	}
	if c.Next() {
		fmt.Printf("next -> %s\n", c.Key())
	}
	if c.Prev() {
		fmt.Printf("prev -> %s\n", c.Key())
	}
	if c.Last() {
		fmt.Printf("last -> %s\n", c.Key())
	}
	if !c.Next() && c.Err() == nil {
		fmt.Println("end of range")
	}
	if err := c.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// seek 2024-05 -> 2024-07
	// next -> 2025-02
	// prev -> 2024-07
	// last -> 2025-02
	// end of range
}

// Keys with a time-to-live vanish from reads once they expire; PurgeExpired
// removes them from disk. A ManualClock makes time move only when told to.
func ExampleColumnFamily_PutTTL() {
	clock := kvstore.NewManualClock(time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC))
	db, err := kvstore.Open("", kvstore.Options{Clock: clock})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	sessions, err := db.CreateColumnFamily("sessions")
	if err != nil {
		log.Fatal(err)
	}

	if err := sessions.PutTTL([]byte("s1"), []byte("alice"), 30*time.Minute); err != nil {
		log.Fatal(err)
	}
	if err := sessions.PutTTL([]byte("s2"), []byte("bob"), 2*time.Hour); err != nil {
		log.Fatal(err)
	}
	if err := sessions.Put([]byte("admin"), []byte("root")); err != nil {
		log.Fatal(err)
	}
	err = sessions.PutTTL([]byte("s3"), []byte("x"), 0)
	fmt.Println("zero TTL:", errors.Is(err, kvstore.ErrInvalidTTL))

	left, _ := sessions.TTL([]byte("s1"))
	fmt.Println("s1 expires in", left)
	left, _ = sessions.TTL([]byte("admin"))
	fmt.Println("admin is permanent:", left == kvstore.NoTTL)

	clock.Advance(time.Hour)
	_, err = sessions.Get([]byte("s1"))
	fmt.Println("s1 after 1h:", errors.Is(err, kvstore.ErrNotFound))

	clock.Advance(2 * time.Hour)
	n, err := sessions.PurgeExpired(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	count, _ := sessions.Count()
	fmt.Printf("purged %d, %d left\n", n, count)
	// Output:
	// zero TTL: true
	// s1 expires in 30m0s
	// admin is permanent: true
	// s1 after 1h: true
	// purged 1, 1 left
}

// A Batch applies many puts and deletes in one transaction; one bad
// operation fails the whole batch and writes nothing.
func ExampleColumnFamily_Apply() {
	db, err := kvstore.Open("", kvstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := db.Put([]byte("old"), []byte("1")); err != nil {
		log.Fatal(err)
	}

	var b kvstore.Batch
	for i := range 3 {
		b.Put(fmt.Appendf(nil, "k%d", i), fmt.Appendf(nil, "v%d", i))
	}
	b.PutTTL([]byte("temp"), []byte("t"), time.Minute)
	b.Delete([]byte("old"))
	if err := db.Apply(ctx, &b); err != nil {
		log.Fatal(err)
	}

	var bad kvstore.Batch
	bad.Put([]byte("fine"), []byte("x"))
	bad.Put(nil, []byte("no key"))
	err = db.Apply(ctx, &bad)
	fmt.Println(errors.Is(err, kvstore.ErrInvalidKey))

	for e, err := range db.All() {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s ", e.Key)
	}
	fmt.Println()
	// Output:
	// true
	// k0 k1 k2 temp
}

// Backup writes a consistent copy of a store, even an in-memory one, to a
// new file while writers go on.
func ExampleStore_Backup() {
	dir, err := os.MkdirTemp("", "snkv-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	mem, err := kvstore.Open("", kvstore.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close()
	if err := mem.Put([]byte("k"), []byte("saved")); err != nil {
		log.Fatal(err)
	}
	dest := filepath.Join(dir, "copy.db")
	if err := mem.Backup(ctx, dest); err != nil {
		log.Fatal(err)
	}

	cp, err := kvstore.Open(dest, kvstore.Options{ReadOnly: true})
	if err != nil {
		log.Fatal(err)
	}
	defer cp.Close()
	v, err := cp.Get([]byte("k"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", v)
	fmt.Println(cp.IntegrityCheck(ctx))
	// Output:
	// saved
	// <nil>
}

// Open an encrypted store with a password; a wrong one is refused with
// ErrAuth and changes nothing. (A real program reads the password from a
// prompt or a secret store, and keeps the default key-derivation cost.)
func ExampleOptions_encryption() {
	dir, err := os.MkdirTemp("", "snkv-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "secret.db")
	enc := &kvstore.Encryption{Password: []byte("correct horse battery staple"), KDF: kvstore.LightKDF}

	db, err := kvstore.Open(path, kvstore.Options{Encryption: enc})
	if err != nil {
		log.Fatal(err)
	}
	if err := db.Put([]byte("session:42"), []byte("token-abc")); err != nil {
		log.Fatal(err)
	}
	fmt.Println("encrypted:", db.Encrypted())
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}

	_, err = kvstore.Open(path, kvstore.Options{Encryption: &kvstore.Encryption{Password: []byte("guess")}})
	fmt.Println("wrong password refused:", errors.Is(err, kvstore.ErrAuth))

	db, err = kvstore.Open(path, kvstore.Options{Encryption: enc})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	v, err := db.Get([]byte("session:42"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(v))
	// Output:
	// encrypted: true
	// wrong password refused: true
	// token-abc
}

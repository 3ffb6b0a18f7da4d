package kvstore_test

import (
	"os"
	"testing"
	"time"

	"github.com/snkv-go/snkv/kvstore"
	"github.com/stretchr/testify/require"
)

// TestOpenWhileAnotherCreates: a store file that is still all zeros, as
// SQLite's unix VFS leaves it for an instant when it grows a new file
// before writing its first page, is read again until its header appears,
// not refused as corrupt (TestConcurrentCreation met it now and then).
func TestOpenWhileAnotherCreates(t *testing.T) {
	made := tempPath(t)
	src := openAt(t, made, kvstore.Options{})
	require.NoError(t, src.Put([]byte("k"), []byte("v")))
	require.NoError(t, src.Close())
	image, err := os.ReadFile(made)
	require.NoError(t, err)

	path := tempPath(t)
	require.NoError(t, os.WriteFile(path, make([]byte, 4096), 0o600))
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(20 * time.Millisecond)
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteAt(image, 0)
			_ = f.Close()
		}
		if err != nil {
			t.Error(err)
		}
	}()
	db, err := kvstore.Open(path, kvstore.Options{})
	<-done
	require.NoError(t, err, "a file still being created is not corrupt")
	v, err := db.Get([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, "v", string(v))
	require.NoError(t, db.Close())
}

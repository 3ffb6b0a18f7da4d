package kvstore

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Open reads the encryption header with the file's format, on the one
// connection it opens: it opens no reader connection (each parses the
// whole schema, the main cost of Open on a file of many column families).
func TestOpenOpensNoReader(t *testing.T) {
	for _, enc := range []*Encryption{nil, {Key: bytes.Repeat([]byte{3}, 32)}} {
		path := filepath.Join(t.TempDir(), "s.db")
		s, err := Open(path, Options{Encryption: enc})
		require.NoError(t, err)
		require.NoError(t, s.Close())
		s, err = Open(path, Options{Encryption: enc})
		require.NoError(t, err)
		require.Zero(t, s.db.OpenReaders(), "encrypted: %v", enc != nil)
		require.NoError(t, s.Close())
	}
}

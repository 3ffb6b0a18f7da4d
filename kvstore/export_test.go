package kvstore

import (
	"bytes"
	"os"
	"time"
)

// SNKV_TEST_ENCRYPTION=1 runs this package's tests against encrypted
// stores: every store a test opens without Options.Encryption (and that
// can be encrypted: writable, current format) is encrypted with one raw
// key, and opened with it again.
func init() {
	if os.Getenv("SNKV_TEST_ENCRYPTION") == "1" {
		testEncryption = &Encryption{Key: bytes.Repeat([]byte{0x5e}, 32)}
	}
}

// SealedSuite reports whether the tests run against encrypted stores.
func SealedSuite() bool { return testEncryption != nil }

// PurgeEvery returns the interval of s's background purge (0: none).
func PurgeEvery(s *Store) time.Duration { return s.purgeEvery }

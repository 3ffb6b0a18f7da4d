// Package seal is encryption at rest for snkv: it seals values with
// XChaCha20-Poly1305 (golang.org/x/crypto), bound as associated data to
// the store, table and key they live under; derives key-encryption keys
// from passwords with Argon2id; and reads and writes the store's
// encryption header, which wraps the random data keys under each secret
// that may open the store.
//
// It knows nothing of SQL or tables: package columnfamily calls it from the
// row codec, which every write and read path (SQL and below SQL) goes
// through, and stores the header in the meta table.
package seal

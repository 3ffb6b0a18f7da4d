// Package rowcodec is how snkv stores a row and checks it when it reads it
// back: the CRC-32C checksum beside every data row and TTL key index row
// (with a flag mixed in when the key has a TTL, and another when the value
// is sealed), the checks of each cell's storage class and length, the
// verdict on a stored checksum (verified, unverified, damaged), and the
// opening of sealed values with the keys of an encryption state.
//
// It holds no state of its own: the callers (the column family handles and
// the catalog's conversions and checks) pass the row, the table's name and
// the encryption state. docs/format.md describes the checksums and
// docs/encryption.md the sealed form.
package rowcodec

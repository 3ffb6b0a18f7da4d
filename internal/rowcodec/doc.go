// Package rowcodec owns the row: how snkv stores one row of a column
// family (or hidden table) and checks it when it reads it back. Codec
// (row.go) is the one place that encodes a row, with Encode (the value, or
// its sealed form, and the CRC-32C checksum with the TTL flag mixed in when
// the key has a TTL and a seal flag when the value is sealed) and Put
// (below SQL when the engine can, else the table's upsert statement), and
// that decodes one, with Decode (the key, the expiry against the key index
// row's checksum, the raw value, then the checksum and the seal opened,
// Open in seal.go). Every read (point reads, scans), the integrity check,
// the re-seal of a conversion and every write path go through it, so a
// change to the checksum or the seal is made here alone.
//
// The package extends what was the row's checksum and seal code rather
// than a new package beside it: everything it holds is about the bytes of
// one row, and it depends only on the packages below it (engine, layout,
// expiry, seal). It holds no state of a column family: family.Family.Codec
// makes a Codec from the family's layout and the store's encryption state,
// and the catalog's checks and conversions make their own. The encryption
// states a store has followed (History) are here too, for reads of a
// snapshot older than a conversion. docs/format.md describes the checksums
// and docs/encryption.md the sealed form.
package rowcodec

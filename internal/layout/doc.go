// Package layout names the SQL objects of snkv's files and writes their
// SQL: Objects names the data table, read view, TTL tables and triggers of
// one column family (or hidden table) and says which layout they have
// (format 1, format 2, or a version-1 table part way through Upgrade); its
// methods return the DDL of each layout and Queries, the statements a
// column family's handles run. It only builds strings: it opens nothing and
// imports nothing of snkv's, so that every package below the public API
// (the B-tree layer included) can use the one type.
//
// testdata/ holds what each layout generates, checked by the golden tests
// (go test ./internal/layout -run Golden -update rewrites it);
// docs/format.md describes the same objects for people.
package layout

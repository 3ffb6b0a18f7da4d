// Package testutil holds what the tests of several packages share, written
// once: the re-run of the test binary as a child process (ChildCommand,
// RunChild, StartChild), the lookup of the stock sqlite3 shell and its runs
// (SQLite3, Shell), golden files rewritten by -update (Golden, GoldenFile),
// a directory's names (ListDir), compressed fixtures (ReadGzip), goroutines that loop beside a test
// until it stops them (Loops), and, in its package tempstore, temporary
// stores.
//
// Only test files import it. It imports nothing of snkv, so the tests of
// every package may use it; tempstore imports kvstore, so only the tests
// outside kvstore's own package and the packages below it may use that one.
//
// docs/testing.md says where each kind of test lives.
package testutil

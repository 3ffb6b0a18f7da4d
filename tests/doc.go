// Package tests holds black-box tests that use snkv the way an outside tool
// or a crashing program would, through the public API and the file itself.
//
// The shell tests check snkv's promise that a store is an ordinary SQLite
// database: they create a store through kvstore, close it, and then drive
// the stock sqlite3 command-line shell against the file (tables listed, rows
// readable, header fields, TTL companion tables and the triggers that keep
// them in step), and finally reopen the file with kvstore. They need the
// sqlite3 program on the PATH: without it they are skipped, except when the
// environment variable CI is "true", where a missing shell is a failure
// (.ci/run installs it).
//
// The crash tests kill child processes in the middle of TTL writes and
// purges and check that every file they leave behind is consistent.
//
// The memory tests build testdata/memchild, a program that imports kvstore,
// run it in fresh processes and hold the peaks of its resident memory, read
// from its own /proc/self/status, to the budgets of docs/memory.md.
package tests
